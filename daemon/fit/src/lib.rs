//! Fitted Information Trees: a large Markdown document becomes a root under a token threshold
//! that keeps what matters inline and ends each split-off section with a link to a
//! subdocument (`→ [stem/name.md](stem/name.md) (~N tokens)`), recursively, losing nothing.
//!
//! Invariants (tested here and by `../shared/eval/fit/check_fit.py`): every file ≤ the hard
//! threshold; links are plain relative links whose text is their target; annotations are the
//! target file's own estimate; a link is the last thing in its section; every non-blank line
//! of the original is reachable, in order, by replacing links with their targets; nothing
//! before the first heading is lost; no two sections share a file; line endings are kept; a
//! fitted root is left as it is (re-running changes no byte).

pub mod scan;
mod split;
#[cfg(test)]
mod tests;
pub mod write;

use std::path::{Path, PathBuf};

use fittok_tokens::{Encoding, count};

#[cfg(test)]
use fittok_util::testing;

/// How sizes are measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Estimator {
    /// The real tokenizer.
    #[default]
    Cl100k,
    /// The original tool's estimate: chars/4 (chars/3.5 for a text that is one code fence).
    Chars4,
}

impl Estimator {
    pub fn count(self, text: &str) -> usize {
        match self {
            Estimator::Cl100k => count(Encoding::Cl100k, text),
            Estimator::Chars4 => {
                if text.is_empty() {
                    return 0;
                }
                let chars = text.chars().count() as f64;
                let s = text.trim();
                if s.starts_with("```") && s.ends_with("```") && s != "```" {
                    (chars / 3.5) as usize
                } else {
                    (chars / 4.0) as usize
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct FitOptions {
    pub level: Level,
    pub soft: usize,
    pub hard: usize,
    /// Sections up to this size are kept inline while the root stays under `soft`.
    pub inline_threshold: usize,
    /// Step by which the inline threshold shrinks while the root is too big.
    pub inline_reduction: usize,
    /// A section whose split would save less than this is kept inline.
    pub trivial_extension: usize,
    /// Fewest sections a heading level must give to split at it (≥ 2).
    pub min_segments: usize,
    /// Code languages kept nearest the root at level ≥ 1.5, in priority order.
    pub inline_languages: Vec<String>,
    pub estimator: Estimator,
    /// The question sections are fitted to at level 2.5.
    pub query: Option<String>,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            level: Level::Structure,
            soft: 3000,
            hard: 5000,
            inline_threshold: 600,
            inline_reduction: 100,
            trivial_extension: 25,
            min_segments: 3,
            inline_languages: vec!["python".into(), "javascript".into(), "typescript".into()],
            estimator: Estimator::Cl100k,
            query: None,
        }
    }
}

/// How much a tree does beyond splitting, each level adding to the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// 1: split at the structure, keep what fits inline.
    Structure,
    /// 1.5: preferred code languages nearest the root.
    CodeFirst,
    /// 2: a lexical teaser (the section's most telling sentence) beside each link.
    Teasers,
    /// 2.5: sections relevant to the query stay nearest the root.
    QueryFitted,
    /// 3: a language model summarises sections and decides placement.
    Llm,
    /// 3.5: the model places sections for the query.
    LlmQuery,
    /// 4: the model places sections for the task in the query.
    LlmTask,
}

impl Level {
    const ALL: [(f32, Level); 7] = [
        (1.0, Level::Structure),
        (1.5, Level::CodeFirst),
        (2.0, Level::Teasers),
        (2.5, Level::QueryFitted),
        (3.0, Level::Llm),
        (3.5, Level::LlmQuery),
        (4.0, Level::LlmTask),
    ];

    /// The level numbered `n` as users write it (1, 1.5, … 4).
    pub fn from_number(n: f32) -> Result<Level, FitError> {
        Self::ALL
            .iter()
            .find(|(x, _)| *x == n)
            .map(|(_, l)| *l)
            .ok_or(FitError::Level(n))
    }

    pub fn number(self) -> f32 {
        Self::ALL
            .iter()
            .find(|(_, l)| *l == self)
            .map_or(1.0, |(x, _)| *x)
    }

    pub fn code_first(self) -> bool {
        self >= Level::CodeFirst
    }

    pub fn teasers(self) -> bool {
        self >= Level::Teasers
    }

    pub fn fits_query(self) -> bool {
        self >= Level::QueryFitted
    }

    pub fn uses_llm(self) -> bool {
        self >= Level::Llm
    }
}

/// A language model's judgement, for levels 3–4: a summary of a section, and which sections
/// matter most (for the reader, or for a task).
pub trait Advisor: Sync {
    /// One or two sentences saying what `section` holds.
    fn summary(&self, section: &str) -> Result<String, AdviceError>;
    /// Indices of `sections` (title and opening line each), most important first.
    fn importance(
        &self,
        sections: &[String],
        task: Option<&str>,
    ) -> Result<Vec<usize>, AdviceError>;
}

/// A model that could not advise: unreachable, refusing, or answering nonsense. The whole
/// plan fails with it ([`FitError::Llm`]); nothing is written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AdviceError(pub String);

#[derive(Debug, thiserror::Error)]
pub enum FitError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} is not valid UTF-8 Markdown")]
    NotUtf8(PathBuf),
    #[error(
        "{0} is not a Markdown file (expected .md, .markdown, .mdown, .mkd, .mkdn or .mdx); nothing written"
    )]
    NotMarkdown(PathBuf),
    #[error("{0} holds binary data, not Markdown text; nothing written")]
    Binary(PathBuf),
    #[error("soft threshold {soft} must be positive and at most the hard threshold {hard}")]
    Thresholds { soft: usize, hard: usize },
    #[error("level {0} is not one of 1, 1.5, 2, 2.5, 3, 3.5, 4")]
    Level(f32),
    #[error("levels 3-4 need an LLM endpoint: pass --llm-base-url (and --llm-model)")]
    NoAdvisor,
    #[error("the LLM failed, nothing written: {0}")]
    Llm(AdviceError),
    #[error(
        "{0} exists and fittok did not write it; nothing written (move it, or fit into another folder)"
    )]
    NotOurs(PathBuf),
    #[error("{0} is a directory, not a Markdown file; nothing written")]
    IsDirectory(PathBuf),
    #[error(
        "{0} is read-only, so it is not fitted in place; nothing written (make it writable first, e.g. `chmod u+w`)"
    )]
    ReadOnly(PathBuf),
    #[error("the folder {0} is not writable; nothing written")]
    NotWritable(PathBuf),
}

/// One file of a tree.
#[derive(Debug, Clone)]
pub struct FitFile {
    /// Relative to the root's directory; the root itself is its file name.
    pub rel: String,
    pub tokens: usize,
    pub text: String,
}

/// What `generate` did or would do.
#[derive(Debug, Clone)]
pub struct FitReport {
    pub root: PathBuf,
    /// Root first, then subdocuments in link order.
    pub files: Vec<FitFile>,
    /// Nothing to do: the document fits, or it is already a fitted root.
    pub unchanged: Option<&'static str>,
    pub backup: Option<PathBuf>,
}

/// Sizes against thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Fits,
    OverSoft,
    OverHard,
}

pub fn verdict(tokens: usize, opts: &FitOptions) -> Verdict {
    if tokens > opts.hard {
        Verdict::OverHard
    } else if tokens > opts.soft {
        Verdict::OverSoft
    } else {
        Verdict::Fits
    }
}

/// Why a file is over the hard threshold when the planner could not help it: it holds a
/// line longer than hard, and lines are never split. `None` when no single line explains it.
/// A line is weighed as the least a file can hold it as: with its line break, and inside a
/// fence alone in its fence (the opening line above it, the marker below), which `chars4`
/// counts denser than the bare line.
pub fn unsplittable_line(text: &str, opts: &FitOptions) -> Option<String> {
    let mut fence: Option<(&str, &str)> = None;
    let mut worst: Option<(usize, usize)> = None;
    for (i, l) in scan::scan(text).iter().enumerate() {
        let tokens = match (l.fence_open, fence) {
            (Some(marker), _) => {
                fence = Some((l.text, marker));
                opts.estimator.count(l.text)
            }
            (None, Some((open, marker))) if l.in_fence => opts.estimator.count(&format!(
                "{open}{}\n{marker}\n",
                l.text.trim_end_matches('\n')
            )),
            _ => {
                fence = None;
                opts.estimator.count(l.text)
            }
        };
        if worst.is_none_or(|(_, w)| tokens > w) {
            worst = Some((i + 1, tokens));
        }
    }
    let (line, tokens) = worst?;
    (tokens > opts.hard).then(|| {
        format!(
            "line {line} alone is {} tokens; lines are never split",
            thousands(tokens)
        )
    })
}

/// Whether a file name says Markdown.
pub fn is_markdown_name(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        ["md", "markdown", "mdown", "mkd", "mkdn", "mdx"].contains(&e.to_ascii_lowercase().as_str())
    })
}

/// The lowercased stem naming a document's subdocument folder (`BERNARD.md` → `bernard`).
pub fn stem_of(file_name: &str) -> String {
    file_name
        .rsplit_once('.')
        .map_or(file_name, |(stem, _)| stem)
        .to_lowercase()
}

fn check(opts: &FitOptions) -> Result<(), FitError> {
    if opts.soft == 0 || opts.soft > opts.hard {
        return Err(FitError::Thresholds {
            soft: opts.soft,
            hard: opts.hard,
        });
    }
    Ok(())
}

/// Whether `text` is already a fitted root: it links into its own subdocument folder and the
/// targets exist.
fn is_fitted(text: &str, dir: &Path, stem: &str) -> bool {
    scan::scan(text)
        .iter()
        .filter(|l| l.link && !l.in_fence)
        .any(|l| {
            let t = l.text;
            t.split_once("](")
                .and_then(|(_, r)| r.split_once(')'))
                .is_some_and(|(target, _)| {
                    target.starts_with(&format!("{stem}/")) && dir.join(target).is_file()
                })
        })
}

/// Plans the tree of `text` (the document named `file_name`) without touching the disk.
pub fn plan(text: &str, file_name: &str, opts: &FitOptions) -> Result<Vec<FitFile>, FitError> {
    plan_with(text, file_name, opts, None)
}

/// Plans with a language model's advice (levels 3–4 require one).
pub fn plan_with(
    text: &str,
    file_name: &str,
    opts: &FitOptions,
    advisor: Option<&dyn Advisor>,
) -> Result<Vec<FitFile>, FitError> {
    check(opts)?;
    if opts.level.uses_llm() && advisor.is_none() {
        return Err(FitError::NoAdvisor);
    }
    split::Planner::new(text, opts, advisor)
        .run(file_name, &stem_of(file_name))
        .map_err(FitError::Llm)
}

/// Fits the document at `path` in place: root at the same path, subdocuments in the folder
/// beside it, the original kept once as `<name>.unfit.md`. With `dry_run`, writes nothing.
pub fn generate(path: &Path, opts: &FitOptions, dry_run: bool) -> Result<FitReport, FitError> {
    generate_with(path, opts, dry_run, None)
}

/// `generate` with a language model's advice (levels 3–4). When the model fails, nothing is
/// written.
pub fn generate_with(
    path: &Path,
    opts: &FitOptions,
    dry_run: bool,
    advisor: Option<&dyn Advisor>,
) -> Result<FitReport, FitError> {
    check(opts)?;
    // Fitting rewrites the file in place: only ever a Markdown document (an agent may name
    // any file).
    if path.is_dir() {
        return Err(FitError::IsDirectory(path.to_path_buf()));
    }
    if !is_markdown_name(path) {
        return Err(FitError::NotMarkdown(path.to_path_buf()));
    }
    let io = |source| FitError::Io {
        path: path.to_path_buf(),
        source,
    };
    let bytes = std::fs::read(path).map_err(io)?;
    if bytes.contains(&0) {
        return Err(FitError::Binary(path.to_path_buf()));
    }
    let text = String::from_utf8(bytes).map_err(|_| FitError::NotUtf8(path.to_path_buf()))?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "document.md".into());
    let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let stem = stem_of(&file_name);
    let tokens = opts.estimator.count(&text);
    let unchanged_report = |why| FitReport {
        root: path.to_path_buf(),
        files: vec![FitFile {
            rel: file_name.clone(),
            tokens,
            text: String::new(),
        }],
        unchanged: Some(why),
        backup: None,
    };
    if is_fitted(&text, &dir, &stem) {
        return Ok(unchanged_report("already a fitted root"));
    }
    if tokens <= opts.soft {
        return Ok(unchanged_report("fits as it is"));
    }
    let files = plan_with(&text, &file_name, opts, advisor)?;
    let mut report = FitReport {
        root: path.to_path_buf(),
        files,
        unchanged: None,
        backup: None,
    };
    if dry_run {
        return Ok(report);
    }
    // The document is replaced by its fitted root: a read-only one says its owner wants it
    // left as it is.
    if std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly()) {
        return Err(FitError::ReadOnly(path.to_path_buf()));
    }
    write::check(&dir, &report.files, &dir.join(&stem), true)?;
    let backup = dir.join(format!("{stem}.unfit.md"));
    if !backup.exists() {
        write::write_atomic(&backup, text.as_bytes())?;
        report.backup = Some(backup);
    }
    // The tree as a whole (see `write`): an interrupted run leaves the original or the tree,
    // and a file fittok did not write is never replaced.
    write::write_tree(&dir, &report.files, &dir.join(&stem), true)?;
    Ok(report)
}

/// `1760` → `1,760`: token counts as people read them in link annotations.
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
