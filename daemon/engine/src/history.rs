//! The repository's own history as evidence: past commits whose messages resemble a question,
//! and the files they changed.
//!
//! A new issue often resembles an old fix, and the files that fix touched are where to look:
//! this evidence is independent of the code's text, so it helps most where the code's words do
//! not match the question's. [`History::read`] runs `git log` once over the last commits
//! reachable from `HEAD` (merges left out: their changes are their parents') and indexes the
//! messages with the same BM25 and tokenizer as the code. [`History::file_scores`] scores the
//! commits against a question and gives each file the scores of the best commits that touched
//! it, each divided by the square root of how many files that commit touched (a sweeping
//! change says little about any one file).
//!
//! Invariant: reading never fails the caller's answer. No git, no repository, or a `git` that
//! fails all give [`HistoryError`], and an engine without history answers as before. Only
//! history reachable from `HEAD` is read; the working tree is never touched.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::index::bm25::{Bm25, Bm25Builder};

mod named;
pub use named::{NAMED_COMMITS, added_lines, found_again};

/// How many of the best-matching commits vote for their files.
pub const VOTING_COMMITS: usize = 30;
/// A commit that touched more files than this is a sweep (a rename, a reformat, a licence
/// header): its file list is not kept. Its message still counts against the document
/// frequencies, so it does not distort them.
const MAX_FILES_PER_COMMIT: usize = 200;
/// The separators of the log format: ASCII record and unit separators never occur in a path
/// git prints with `core.quotepath` off, nor in a message git has not been told to keep them.
const RECORD: char = '\u{1e}';
const UNIT: char = '\u{1f}';

/// Why history is not available.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("git could not be started: {0}")]
    NoGit(#[source] std::io::Error),
    #[error("not a git work tree with commits ({0})")]
    NotARepository(String),
}

/// The last commits of a repository, indexed by message.
pub struct History {
    /// The commit `HEAD` named when the history was read.
    pub head: String,
    /// Paths (relative to the root the history was read for, `/`-separated), interned.
    paths: Vec<String>,
    /// Per commit, the indexes into `paths` of the files it changed.
    touched: Vec<Vec<u32>>,
    /// Per commit, its full hash (lower-case hex).
    ids: Vec<Box<str>>,
    /// Per issue or pull request number a message mentions (`#1139`), the commits that do,
    /// newest first.
    issues: HashMap<u32, Vec<u32>>,
    messages: Bm25,
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History")
            .field("head", &self.head)
            .field("commits", &self.touched.len())
            .field("paths", &self.paths.len())
            .finish()
    }
}

impl History {
    /// Reads the last `limit` non-merge commits reachable from `HEAD` of the git work tree
    /// holding `root`, with the files each changed under `root`.
    pub fn read(root: &Path, limit: usize) -> Result<History, HistoryError> {
        let head = git(root, &["rev-parse", "--verify", "HEAD"])?;
        let head = head.trim().to_string();
        let log = git(
            root,
            &[
                "-c",
                "core.quotepath=off",
                "log",
                &format!("-n{limit}"),
                "--no-merges",
                "--no-renames",
                "--relative",
                "--name-only",
                &format!("--format={RECORD}%H%n%s%n%b{UNIT}"),
                &head,
                "--",
            ],
        )?;
        Ok(History::parse(head, &log))
    }

    /// The history of a `git log` in the format [`History::read`] asks for.
    fn parse(head: String, log: &str) -> History {
        let mut builder = Bm25Builder::default();
        let mut paths = Vec::new();
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut touched = Vec::new();
        let mut commit_ids = Vec::new();
        let mut issues: HashMap<u32, Vec<u32>> = HashMap::new();
        for record in log.split(RECORD).skip(1) {
            let (message, files) = record.split_once(UNIT).unwrap_or((record, ""));
            let (id, message) = message.split_once('\n').unwrap_or(("", message));
            for n in named::issue_numbers(message) {
                issues.entry(n).or_default().push(commit_ids.len() as u32);
            }
            commit_ids.push(Box::from(id.trim()));
            builder.add(message);
            let files: Vec<&str> = files
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            if files.len() > MAX_FILES_PER_COMMIT {
                touched.push(Vec::new());
                continue;
            }
            touched.push(
                files
                    .into_iter()
                    .map(|f| {
                        *ids.entry(f.to_string()).or_insert_with(|| {
                            paths.push(f.to_string());
                            paths.len() as u32 - 1
                        })
                    })
                    .collect(),
            );
        }
        History {
            head,
            paths,
            touched,
            ids: commit_ids,
            issues,
            messages: builder.finish(),
        }
    }

    /// How many commits were read.
    pub fn commits(&self) -> usize {
        self.touched.len()
    }

    /// Heap bytes held (for the memory report).
    pub fn heap_bytes(&self) -> usize {
        self.messages.heap_bytes()
            + self.ids.iter().map(|i| i.len() + 16).sum::<usize>()
            + self
                .issues
                .values()
                .map(|c| c.capacity() * 4 + 32)
                .sum::<usize>()
            + self.paths.iter().map(|p| p.capacity() + 24).sum::<usize>()
            + self
                .touched
                .iter()
                .map(|t| t.capacity() * 4 + 24)
                .sum::<usize>()
    }

    /// Each file the `VOTING_COMMITS` commits best matching `terms` changed, with its score:
    /// the sum over those commits of the commit's BM25 score divided by the square root of the
    /// number of files it changed. Best first; empty when no message shares a term.
    pub fn file_scores(&self, terms: &[(String, f32)]) -> Vec<(&str, f32)> {
        let scores = self.messages.score(terms);
        let best = crate::index::best_first(&scores, VOTING_COMMITS);
        let mut files: HashMap<u32, f32> = HashMap::new();
        for c in best {
            let t = &self.touched[c as usize];
            if t.is_empty() {
                continue;
            }
            let share = scores[c as usize] / (t.len() as f32).sqrt();
            for &f in t {
                *files.entry(f).or_default() += share;
            }
        }
        let mut out: Vec<(&str, f32)> = files
            .into_iter()
            .map(|(f, s)| (self.paths[f as usize].as_str(), s))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        out
    }
}

/// Whether the work tree holding `root` still has `head` as its `HEAD` (false when git
/// cannot tell): a history read for another `HEAD` is stale.
pub fn is_current(root: &Path, head: &str) -> bool {
    git(root, &["rev-parse", "--verify", "HEAD"]).is_ok_and(|h| h.trim() == head)
}

/// `git -C root ARGS` with no prompt and no pager; its standard output, or why not.
fn git(root: &Path, args: &[&str]) -> Result<String, HistoryError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .output()
        .map_err(HistoryError::NoGit)?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        let why = why
            .lines()
            .next()
            .unwrap_or("git failed")
            .trim()
            .to_string();
        return Err(HistoryError::NotARepository(why));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::bm25::query_terms;

    fn sample() -> History {
        let log = format!(
            "{RECORD}6d3d2750aa\nFix cookie lost after redirect{UNIT}\n\nsrc/sessions.py\nsrc/cookies.py\n\
             {RECORD}6d3d27ffbb\nAdd streaming upload support\n\nbody text{UNIT}\n\nsrc/models.py\n\
             {RECORD}0123abcdef\nReformat everything{UNIT}\n\n{}",
            (0..=MAX_FILES_PER_COMMIT)
                .map(|i| format!("f{i}.py\n"))
                .collect::<String>()
        );
        History::parse("abc".into(), &log)
    }

    #[test]
    fn files_of_commits_resembling_the_question_come_first() {
        let h = sample();
        assert_eq!(h.commits(), 3);
        let files = h.file_scores(&query_terms("cookies are lost on redirect"));
        let names: Vec<&str> = files.iter().map(|f| f.0).collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names.contains(&"src/sessions.py") && names.contains(&"src/cookies.py"));
        // A message's body counts too.
        let files = h.file_scores(&query_terms("body"));
        assert_eq!(files.first().map(|f| f.0), Some("src/models.py"));
    }

    #[test]
    fn a_sweeping_commit_keeps_no_files_and_unrelated_questions_find_none() {
        let h = sample();
        assert!(
            h.file_scores(&query_terms("reformat everything"))
                .is_empty()
        );
        assert!(h.file_scores(&query_terms("zebra giraffe")).is_empty());
    }

    #[test]
    fn a_directory_without_git_history_is_an_error_not_a_panic() {
        let dir = crate::testing::temp_repo("history-none", &[("a.py", "x = 1\n")]);
        // The temporary directory may sit inside some other work tree; either way no panic,
        // and an error when it is not one.
        match History::read(&dir, 100) {
            Ok(h) => assert!(h.commits() <= 100),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn reads_a_real_repository_from_head_relative_to_the_root() {
        let dir = crate::testing::temp_repo(
            "history-git",
            &[("pkg/a.py", "x = 1\n"), ("b.py", "y = 2\n")],
        );
        let root = dir.as_path();
        let run = |args: &[&str]| {
            Command::new("git")
                .arg("-C")
                .arg(root)
                .args(args)
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@t")
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        };
        if !run(&["init", "-q"]) {
            return; // no git on this machine: nothing to read
        }
        assert!(run(&["add", "pkg/a.py"]));
        assert!(run(&["commit", "-q", "-m", "Parse the widget config"]));
        assert!(run(&["add", "b.py"]));
        assert!(run(&["commit", "-q", "-m", "Count gadgets"]));
        let h = History::read(root, 100).expect("history");
        assert_eq!(h.commits(), 2);
        assert!(is_current(root, &h.head));
        let files = h.file_scores(&query_terms("widget config is parsed wrong"));
        assert_eq!(files.first().map(|f| f.0), Some("pkg/a.py"));
        // Read from a subdirectory, paths are relative to it and other files are left out.
        let sub = History::read(&root.join("pkg"), 100).expect("history");
        let files = sub.file_scores(&query_terms("widget gadgets"));
        assert_eq!(files.iter().map(|f| f.0).collect::<Vec<_>>(), vec!["a.py"]);
        // A later commit makes the history stale.
        assert!(run(&["commit", "-q", "--allow-empty", "-m", "later"]));
        assert!(!is_current(root, &h.head));
        let _ = std::fs::remove_dir_all(root);
    }
}
