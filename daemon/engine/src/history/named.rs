//! Commits a question names: by their hash ("broken since commit 6d3d2750", a bisect's result,
//! a link to a commit), or by the issue or pull request their message mentions ("see #1139",
//! a link to `…/pull/1139`). A regression's fix usually changes what the named commit added,
//! and a related issue's fix touched the code this one is about, so the lines such a commit
//! added, found again in today's files, are places the question points at, like a traceback's
//! frames.
//!
//! Only commits of the history read (reachable from `HEAD`) are named: a hash of another
//! branch, a release tarball's or a container image's names nothing here.

use std::collections::HashMap;
use std::path::Path;

use super::{History, HistoryError, git};
use crate::link::Graph;
use crate::repo::Sources;

/// At most this many named commits are read per question.
pub const NAMED_COMMITS: usize = 3;
/// The shortest hash taken for a commit's (git's own default abbreviation).
const MIN_HASH: usize = 7;
/// At most this many hex words of a question are looked up.
const MAX_HEX_WORDS: usize = 64;
/// Issue numbers have at least this many digits: `#1`…`#99` are list items and headings as
/// often as issues.
const MIN_ISSUE_DIGITS: usize = 3;
/// At most this many commits are named through one issue number (newest first).
const PER_ISSUE: usize = 2;
/// A commit that changed more files than this is a sweep: it names no place.
const MAX_FILES: usize = 20;
/// At most this many added lines are kept of one commit: a commit that adds a generated or
/// vendored file points at no more places than its first lines do.
const MAX_ADDED_LINES: usize = 5_000;
/// An added line shorter than this (trimmed) says too little to be found again: `}`,
/// `break;`, `else {`.
const MIN_LINE_CHARS: usize = 8;
/// An added line that today's file holds more often than this is boilerplate there
/// (`return ret;`), not a place.
const MAX_COPIES: usize = 2;

impl History {
    /// The hashes of the commits of this history that `question` names, at most
    /// [`NAMED_COMMITS`]: first those whose hash a word of 7 to 40 hex digits begins (one
    /// commit only), then those whose message mentions an issue the question mentions
    /// ([`issue_numbers`]). Any hex word is taken, digits only included: an abbreviated hash
    /// can be all digits, while a word that is no hash (a number, `defaced`) almost never
    /// begins a commit's hash.
    pub fn named_commits(&self, question: &str) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        let hex_words = question
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| {
                (MIN_HASH..=40).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_hexdigit())
            })
            // A pasted dump can hold thousands (addresses, ids); a reporter names a few.
            .take(MAX_HEX_WORDS);
        for word in hex_words {
            let word = word.to_ascii_lowercase();
            let mut matching = (0..self.ids.len()).filter(|&c| self.ids[c].starts_with(&word));
            if let (Some(c), None) = (matching.next(), matching.next())
                && self.names_places(c)
                && !out.contains(&&*self.ids[c])
            {
                out.push(&self.ids[c]);
            }
        }
        for n in issue_numbers(question) {
            for &c in self.issues.get(&n).into_iter().flatten().take(PER_ISSUE) {
                let id = &*self.ids[c as usize];
                if self.names_places(c as usize) && !out.contains(&id) {
                    out.push(id);
                }
            }
        }
        out.truncate(NAMED_COMMITS);
        out
    }

    /// Whether commit `c` changed files under the root, and not more than [`MAX_FILES`]: a
    /// sweep names no place, and its diff is not worth reading.
    fn names_places(&self, c: usize) -> bool {
        self.touched
            .get(c)
            .is_some_and(|t| !t.is_empty() && t.len() <= MAX_FILES)
    }
}

/// The issue and pull request numbers `text` mentions, in order, each once: `#1139` (after a
/// space, a bracket or at the start) and links ending `/issues/1139` or `/pull/1139`, of
/// [`MIN_ISSUE_DIGITS`] to 7 digits.
pub(super) fn issue_numbers(text: &str) -> Vec<u32> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = if b[i] == b'#'
            && (i == 0 || b[i - 1].is_ascii_whitespace() || b"([{".contains(&b[i - 1]))
        {
            Some(i + 1)
        } else {
            ["/issues/", "/pull/"]
                .iter()
                .find(|p| b[i..].starts_with(p.as_bytes()))
                .map(|p| i + p.len())
        };
        let Some(start) = start else {
            i += 1;
            continue;
        };
        let end = start + b[start..].iter().take_while(|c| c.is_ascii_digit()).count();
        let digits = end - start;
        if (MIN_ISSUE_DIGITS..=7).contains(&digits)
            && !b
                .get(end)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
            && let Ok(n) = text[start..end].parse::<u32>()
            && !out.contains(&n)
        {
            out.push(n);
        }
        i = end.max(i + 1);
    }
    out
}

/// The lines commit `id` added, per file (paths relative to `root`, `/`-separated), from
/// `git show`. Callers read only commits [`History::named_commits`] gives: no sweep.
pub fn added_lines(root: &Path, id: &str) -> Result<Vec<(String, Vec<String>)>, HistoryError> {
    let diff = git(
        root,
        &[
            "-c",
            "core.quotepath=off",
            "show",
            "--format=",
            "--unified=0",
            "--no-renames",
            "--no-color",
            "--no-ext-diff",
            "--relative",
            id,
            "--",
        ],
    )?;
    Ok(parse_added(&diff))
}

/// Where today's files hold the lines a named commit added (`added`, per path): (file, line)
/// pairs, sorted. A line is found again by its trimmed text, since later commits move lines.
pub fn found_again(
    g: &Graph,
    sources: &Sources,
    added: &[(String, Vec<String>)],
) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for (path, lines) in added {
        let Some(file) = g.file_index(path) else {
            continue;
        };
        let Some(src) = sources.get(file as usize) else {
            continue;
        };
        let text = String::from_utf8_lossy(src);
        let mut today: HashMap<&str, Vec<u32>> = HashMap::new();
        for (i, l) in text.lines().enumerate() {
            let l = l.trim();
            if l.len() >= MIN_LINE_CHARS {
                today.entry(l).or_default().push(i as u32 + 1);
            }
        }
        for added in lines {
            if let Some(at) = today.get(added.trim())
                && at.len() <= MAX_COPIES
            {
                out.extend(at.iter().map(|&line| (file, line)));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The added lines of a unified diff, per new path.
fn parse_added(diff: &str) -> Vec<(String, Vec<String>)> {
    let mut files: Vec<(String, Vec<String>)> = Vec::new();
    let mut current: Option<usize> = None;
    let mut after_old_path = false;
    let mut kept = 0;
    for line in diff.lines() {
        let new_path = if after_old_path {
            line.strip_prefix("+++ ")
        } else {
            None
        };
        after_old_path = line.starts_with("--- ") && current.is_none();
        if let Some(path) = new_path {
            current = path.strip_prefix("b/").map(|p| {
                files.push((p.to_string(), Vec::new()));
                files.len() - 1
            });
        } else if line.starts_with("diff ") {
            current = None;
            after_old_path = false;
        } else if let (Some(added), Some(i)) = (line.strip_prefix('+'), current) {
            if kept == MAX_ADDED_LINES {
                break;
            }
            files[i].1.push(added.to_string());
            kept += 1;
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history() -> History {
        let log = format!(
            "{r}6d3d2750aa11\nMake input errors fatal (#1139){u}\n\nsrc/main.c\n\
             {r}6d3d27ffbb22\nOther\n\nFixes #1142, see #1139{u}\n\nsrc/util.c\n\
             {r}0a1b2c3d4e55\nThird: closes #12 and x#1142{u}\n\nsrc/x.c\n\
             {r}2750123488ff\nFourth{u}\n\nsrc/y.c\n",
            r = super::super::RECORD,
            u = super::super::UNIT,
        );
        History::parse("6d3d2750aa11".into(), &log)
    }

    #[test]
    fn a_hash_names_the_one_commit_it_begins() {
        let h = history();
        // Short, long, linked and upper-case forms; each commit once.
        let q = "Broken since commit 6d3d2750 (see https://x/commit/0A1B2C3D4E55), 6d3d2750 again";
        assert_eq!(h.named_commits(q), vec!["6d3d2750aa11", "0a1b2c3d4e55"]);
        // An abbreviated hash of digits only is a hash too.
        assert_eq!(h.named_commits("since 27501234"), vec!["2750123488ff"]);
        // Ambiguous (both begin 6d3d27), too short, beginning no commit's hash: nothing.
        for q in ["6d3d27", "6d3d2", "deadbeefcafe", "1234567", "abc1234ff"] {
            assert!(h.named_commits(q).is_empty(), "{q}");
        }
        // An issue names the commits whose messages mention it, after the hashes.
        assert_eq!(
            h.named_commits("Related: #1142 and https://github.com/o/r/issues/1139"),
            vec!["6d3d27ffbb22", "6d3d2750aa11"]
        );
        assert_eq!(
            h.named_commits("0a1b2c3d4e55 regressed, see (#1139)"),
            vec!["0a1b2c3d4e55", "6d3d2750aa11", "6d3d27ffbb22"]
        );
        // Two digits, a number inside a word, an unknown issue: nothing.
        for q in ["see #12", "x#1142", "#99999"] {
            assert!(h.named_commits(q).is_empty(), "{q}");
        }
    }

    #[test]
    fn issue_numbers_are_hashes_and_links_of_three_to_seven_digits() {
        assert_eq!(
            issue_numbers(
                "#123 (#4567) [#890] a#111 #12 #1234x /pull/77 …/issues/31337 /pull/2024/files"
            ),
            vec![123, 4567, 890, 31337, 2024]
        );
    }

    #[test]
    fn a_diff_gives_each_new_files_added_lines() {
        let diff = "diff --git a/src/main.c b/src/main.c\nindex 1..2 100644\n--- a/src/main.c\n\
                    +++ b/src/main.c\n@@ -10,0 +11,2 @@ int main() {\n+  ret = 0;\n+  // not fatal\n\
                    @@ -20 +22 @@\n-  old();\n+  new();\n\
                    diff --git a/gone.c b/gone.c\ndeleted file mode 100644\n--- a/gone.c\n+++ /dev/null\n\
                    @@ -1 +0,0 @@\n-x\n";
        assert_eq!(
            parse_added(diff),
            vec![(
                "src/main.c".to_string(),
                vec![
                    "  ret = 0;".to_string(),
                    "  // not fatal".to_string(),
                    "  new();".to_string()
                ]
            )]
        );
    }

    #[test]
    fn added_lines_are_found_again_where_they_are_today_unless_short_or_common() {
        let src = "def run(x):\n    status = compute(x)\n    return status\n\n\ndef other():\n    return status\n    return status\n";
        let g = crate::testing::graph_of(&[("a.py", src)]);
        let sources: Sources = vec![std::sync::Arc::from(src.as_bytes())];
        let added = vec![
            (
                "a.py".to_string(),
                vec![
                    "        status = compute(x)".to_string(), // indented differently then
                    "    return status".to_string(),           // three copies today
                    "    }".to_string(),                       // too short
                    "    gone_since = 1".to_string(),          // not there any more
                ],
            ),
            (
                "elsewhere.py".to_string(),
                vec!["status = compute(x)".to_string()],
            ),
        ];
        assert_eq!(found_again(&g, &sources, &added), vec![(0, 2)]);
    }
}
