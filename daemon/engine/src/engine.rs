//! The engine in process: open a repository, answer questions, expand ids.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::Config;
use crate::embed::semantic::SemanticIndex;
use crate::embed::state::{Attached, SemanticState};
use crate::embed::{EmbedError, Embedder, model_dir};
use crate::history::{History, HistoryError};
use crate::index::{Index, Sources};
use crate::layout::{FENCE_CLOSE, heading, node_id, range_heading};
use crate::lines::line_starts;
use crate::pack::Packer;
use crate::pack::block::{Mode, render};
use crate::rank::{Evidence, rank};
use crate::render::{Answer, Provenance, RenderInput, answer};
use crate::repo::{self, BuildOptions, Phase, Progress, RepoGraph};
use crate::snapshot;
use crate::store::Store;
use crate::tokens::Encoding;
use crate::walk::WalkError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Walk(#[from] WalkError),
    /// Holds the id cut to [`SHOWN_ID_CHARS`]: an error travels in a gRPC status header, which
    /// an id of any length must not overflow.
    #[error("unknown id {0:?}: expected `path#Qualified.name` from an answer, or `path:start-end`")]
    UnknownId(String),
    #[error(
        "an id of {0} characters is not an id (at most {MAX_ID_CHARS}): expected `path#Qualified.name` or `path:start-end`"
    )]
    IdTooLong(usize),
    #[error("{path} has {lines} lines: no line of {start}-{end} is in it")]
    LinesOutOfRange {
        path: String,
        start: u32,
        end: u32,
        lines: u32,
    },
}

/// Longer ids are refused outright: no path and name comes near.
pub const MAX_ID_CHARS: usize = 4096;
/// How much of an unknown id an error repeats.
const SHOWN_ID_CHARS: usize = 200;

fn unknown_id(id: &str) -> EngineError {
    let mut shown: String = id.chars().take(SHOWN_ID_CHARS).collect();
    if shown.len() < id.len() {
        shown.push('…');
    }
    EngineError::UnknownId(shown)
}

/// The best-ranked nodes looked at for a mention of the repository's names.
const MENTION_POOL: usize = 50;

/// The share, in [0, 1], of a question's weight that `shown` (an answer's text) contains: each
/// query term weighs its question weight times its rarity in the repository (`idf`); a term the
/// repository never uses weighs as much as its rarest term, so a question about something else
/// entirely ("the capital of France") scores near 0, and one about this code near 1.
pub fn match_strength(
    terms: &[(String, f32)],
    shown: &str,
    idf: impl Fn(&str) -> Option<f32>,
) -> f32 {
    let known: Vec<Option<f32>> = terms.iter().map(|(t, _)| idf(t)).collect();
    let rarest = known
        .iter()
        .flatten()
        .fold(0.0f32, |a, &b| a.max(b))
        .max(1.0);
    let mut present = std::collections::HashSet::new();
    crate::index::tokenize::for_each_token(shown, |t| {
        present.insert(t.to_string());
    });
    let (mut hit, mut all) = (0.0f32, 0.0f32);
    for ((term, w), idf) in terms.iter().zip(&known) {
        let weight = w * idf.unwrap_or(rarest);
        all += weight;
        if idf.is_some() && present.contains(term) {
            hit += weight;
        }
    }
    if all > 0.0 { hit / all } else { 0.0 }
}

/// Whether a question is long enough that the semantic signal is not used for it (see
/// [`crate::rank::rank`]); callers may skip loading the model for it.
pub fn is_long_question(question: &str) -> bool {
    crate::rank::is_long_question(&crate::index::bm25::query_terms(question))
}

/// One question. `budget` 0 means no cap: the relevance cliff alone decides.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub question: String,
    pub budget: usize,
    pub encoding: Encoding,
    pub show_savings: bool,
    /// Include the top-n ranking with per-signal ranks in the answer (0 = none).
    pub explain: usize,
    /// Overrides the engine's own freshness note (the daemon knows what is pending).
    pub freshness: Option<String>,
    /// Node ids the reader has already been shown, with the version shown
    /// ([`crate::index::node_version`]; 0 = whatever version): left out and named in the
    /// answer — unless the code changed since, then shown again and marked as changed.
    pub exclude: std::collections::HashMap<String, u64>,
    /// Which model orders the candidates ([`crate::rank::Ranker::Auto`] unless asked otherwise).
    pub ranker: crate::rank::Ranker,
    /// Overrides why semantics are off, when the engine has none (the daemon knows how a
    /// model download goes now).
    pub semantic_note: Option<String>,
}

/// One candidate of a question with the learned ranker's features: what the training script
/// labels against a fix's lines.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CandidateFeatures {
    pub id: String,
    pub path: String,
    pub kind: &'static str,
    pub start: u32,
    pub end: u32,
    /// Line ranges inside `start..=end` that belong to members, not to this node.
    pub members: Vec<(u32, u32)>,
    pub x: Vec<f32>,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct IndexTimings {
    pub walk: Duration,
    pub parse: Duration,
    pub link: Duration,
    pub lexical: Duration,
    /// Loading the model and looking vectors up in the cache.
    pub semantic_load: Duration,
    /// Embedding nodes the cache did not have.
    pub embed: Duration,
    pub embedded: usize,
    /// Files whose parse came from the cache.
    pub reused: usize,
    /// Reading the repository's snapshot (graph and indexes), when one was restored.
    pub snapshot: Duration,
}

/// How much embedding work `enable_semantic` may do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SemanticMode {
    Off,
    /// Use cached vectors; embed what is missing for at most this long.
    Cached(Duration),
    /// Embed every node that has no vector.
    Full,
}

pub struct Engine {
    pub repo: RepoGraph,
    pub sources: Sources,
    pub index: Index,
    /// Line starts per file, filled as answers need them.
    lines: crate::lines::LineIndex,
    pub timings: IndexTimings,
    /// The model and vectors, when attached, and what answers say of them.
    pub semantic: SemanticState,
    /// The repository's issue-template lines, dropped from questions.
    boilerplate: crate::question::Boilerplate,
    store: Option<Arc<Store>>,
    /// "current", or what is pending (set by whoever keeps the engine fresh).
    pub freshness: String,
    config: Arc<Config>,
    /// Restored from a snapshot that matched the repository: saving it again writes nothing new.
    restored: bool,
    /// A build's or an update's parses, for the parse cache: written by [`Engine::store_parses`].
    unstored_parses: std::sync::Mutex<Option<repo::UnstoredParses>>,
    /// The repository's commit history, once read ([`Engine::set_history`]); carried to the
    /// next snapshot by [`Engine::update`].
    history: std::sync::RwLock<Option<Arc<History>>>,
}

/// The store in `cache_dir`, or `None` (logged) when it cannot be opened — for example
/// because another process holds it.
pub fn open_store(cache_dir: &Path) -> Option<Arc<Store>> {
    match Store::open(&cache_dir.join(STORE_FILE)) {
        Ok(s) => Some(Arc::new(s)),
        Err(e) => {
            tracing::warn!(error = %e, "cache unavailable; parses and vectors live in memory only");
            None
        }
    }
}

/// What the background embedder takes first: nodes central to the graph (global PageRank),
/// doubled in the files changed most recently (the newest tenth by mtime — what is being
/// worked on is what gets asked about), public ones (a signature saying `pub`/`public`/
/// `export`) half again, and larger ones before one-liners.
fn embedding_priority(repo: &RepoGraph, index: &Index) -> Vec<f32> {
    let g = &repo.graph;
    let mut mtimes: Vec<u64> = repo.stamps.iter().map(|s| s.mtime_ns).collect();
    mtimes.sort_unstable();
    // The newest tenth, when the tree's mtimes say anything (a fresh clone's are all alike).
    let recent_from = mtimes
        .get(mtimes.len() - mtimes.len() / 10)
        .copied()
        .filter(|&m| mtimes.first().is_some_and(|&oldest| m > oldest))
        .unwrap_or(u64::MAX);
    (0..g.nodes.len() as u32)
        .map(|n| {
            let file = g.nodes[n as usize].file as usize;
            let def = g.def(n);
            let mut w = index.pagerank.get(n as usize).copied().unwrap_or(0.0);
            if repo
                .stamps
                .get(file)
                .is_some_and(|s| s.mtime_ns >= recent_from)
            {
                w *= 2.0;
            }
            let sig = def.signature.trim_start();
            if ["pub ", "pub(", "public ", "export "]
                .iter()
                .any(|p| sig.starts_with(p))
            {
                w *= 1.5;
            }
            let lines = (def.end_line.saturating_sub(def.start_line) + 1) as f32;
            w * lines.min(40.0).sqrt()
        })
        .collect()
}

/// Builds the lexical indexes of a built repository, with the timings of every stage so far.
fn lexical(
    repo: &RepoGraph,
    sources: &Sources,
    progress: Option<Progress<'_>>,
) -> (Index, IndexTimings) {
    timed_lexical(repo, progress, || Index::build(&repo.graph, sources))
}

/// [`lexical`] for an update of `prev`: only what changed is tokenized again (`kept`: each
/// node's unchanged counterpart in `prev`, [`crate::index::kept_nodes`]).
fn lexical_update(
    prev: &Engine,
    repo: &RepoGraph,
    sources: &Sources,
    kept: &[Option<u32>],
    progress: Option<Progress<'_>>,
) -> (Index, IndexTimings) {
    timed_lexical(repo, progress, || {
        Index::update(
            &prev.repo.graph,
            &prev.sources,
            &prev.index,
            &repo.graph,
            sources,
            kept,
        )
    })
}

/// Runs the lexical stage `build`, reporting it to `progress` and timing it beside the
/// repository's own stages.
fn timed_lexical(
    repo: &RepoGraph,
    progress: Option<Progress<'_>>,
    build: impl FnOnce() -> Index,
) -> (Index, IndexTimings) {
    if let Some(p) = progress {
        p(Phase::Lexical, 0, 1);
    }
    let t = Instant::now();
    let index = build();
    let timings = IndexTimings {
        walk: repo.timings.walk,
        parse: repo.timings.parse,
        link: repo.timings.link,
        lexical: t.elapsed(),
        reused: repo.timings.reused,
        ..IndexTimings::default()
    };
    (index, timings)
}

/// The cache file's name inside the cache directory.
pub const STORE_FILE: &str = "cache.redb";

impl Engine {
    /// Opens a repository in process, with the on-disk cache of `config` when it has one
    /// and it is free.
    pub fn open(path: &Path, config: Arc<Config>) -> Result<Engine, EngineError> {
        let store = config.cache_dir.as_deref().and_then(open_store);
        Self::open_in(path, config, store, None)
    }

    /// Opens a repository with a given store (shared by the daemon's repositories) and an
    /// optional progress callback.
    pub fn open_in(
        path: &Path,
        config: Arc<Config>,
        store: Option<Arc<Store>>,
        progress: Option<Progress<'_>>,
    ) -> Result<Engine, EngineError> {
        Self::open_with(path, config, store, progress, None)
    }

    /// [`Engine::open_in`] for a first answer: a cold build leaves the test files out when
    /// together they hold at least `defer_tests_over` bytes ([`Engine::deferred_tests`] says
    /// how many), and the next [`Engine::update`] adds them. Tests were 57 % of apache/kafka's
    /// source bytes, so its first answer came after parsing more than twice what it needed;
    /// questions rank tests low unless they ask for them, and those callers ask for all.
    pub fn open_sources_first(
        path: &Path,
        config: Arc<Config>,
        store: Option<Arc<Store>>,
        progress: Option<Progress<'_>>,
        defer_tests_over: u64,
    ) -> Result<Engine, EngineError> {
        Self::open_with(path, config, store, progress, Some(defer_tests_over))
    }

    fn open_with(
        path: &Path,
        config: Arc<Config>,
        store: Option<Arc<Store>>,
        progress: Option<Progress<'_>>,
        defer_tests_over: Option<u64>,
    ) -> Result<Engine, EngineError> {
        let root = path.canonicalize().unwrap_or_else(|_| PathBuf::from(path));
        if let Some(restored) = Self::restore(&root, &config, &store, progress) {
            return restored;
        }
        let (repo, sources) = repo::build_with_sources(
            &root,
            BuildOptions {
                walk: Some(&config.walk),
                store: store.as_deref(),
                progress,
                previous: None,
                linked: None,
                defer_parse_store: true,
                defer_tests_over,
                cancel: None,
            },
        )?;
        let (index, timings) = lexical(&repo, &sources, progress);
        Ok(Engine::assemble(
            repo, sources, index, timings, store, config,
        ))
    }

    /// Test files a first build left out (see [`Engine::open_sources_first`]); 0 once an
    /// update added them, and for every other build.
    pub fn deferred_tests(&self) -> usize {
        self.repo.deferred_tests
    }

    /// An engine over built (or restored) parts, without semantics yet.
    /// The engine of a built repository; the parses its build left unstored wait for
    /// [`Engine::store_parses`].
    fn assemble(
        mut repo: RepoGraph,
        sources: Sources,
        index: Index,
        timings: IndexTimings,
        store: Option<Arc<Store>>,
        config: Arc<Config>,
    ) -> Engine {
        let unstored = repo.unstored.take();
        Engine {
            lines: crate::lines::LineIndex::new(sources.len()),
            boilerplate: crate::question::Boilerplate::load(&repo.root),
            repo,
            sources,
            index,
            timings,
            semantic: SemanticState::default(),
            store,
            freshness: "current".into(),
            config,
            restored: false,
            unstored_parses: std::sync::Mutex::new(unstored),
            history: std::sync::RwLock::new(None),
        }
    }

    /// The engine of `root` from its snapshot in the cache directory, brought up to date by
    /// [`Engine::update`] when files changed since (so it equals a fresh build either way);
    /// `None` when there is no usable snapshot.
    fn restore(
        root: &Path,
        config: &Arc<Config>,
        store: &Option<Arc<Store>>,
        progress: Option<Progress<'_>>,
    ) -> Option<Result<Engine, EngineError>> {
        let path = snapshot::path_for(config.cache_dir.as_deref()?, root);
        let t = Instant::now();
        let restored = match snapshot::load(&path, root, &config.walk) {
            Ok(Some(r)) => r,
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!(error = %e, "snapshot unusable; building afresh");
                return None;
            }
        };
        let loaded = t.elapsed();
        let files = restored.sources.len();
        let mut repo = restored.repo;
        repo.timings = repo::Timings {
            reused: files,
            ..repo::Timings::default()
        };
        let mut engine = Engine::assemble(
            repo,
            restored.sources,
            restored.index,
            IndexTimings {
                snapshot: loaded,
                reused: files,
                ..IndexTimings::default()
            },
            store.clone(),
            config.clone(),
        );
        engine.restored = true;
        let t = Instant::now();
        let stale = match engine.stale_paths() {
            Ok(stale) => stale,
            Err(e) => return Some(Err(e)),
        };
        engine.timings.walk = t.elapsed();
        if stale.is_empty() {
            tracing::debug!(
                files,
                ms = loaded.as_millis() as u64,
                "restored from snapshot"
            );
            return Some(Ok(engine));
        }
        tracing::debug!(
            files,
            changed = stale.len(),
            "snapshot restored, then updated"
        );
        Some(engine.update(stale.into_iter().collect(), progress))
    }

    /// Writes the parses a build or an update left out of the parse cache (once;
    /// [`Engine::save_snapshot`] does it first). An engine dropped before either loses only the
    /// next cold start's reuse of them.
    pub fn store_parses(&self) {
        let pending = self
            .unstored_parses
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let (Some(pending), Some(store)) = (pending, self.store.as_deref()) {
            pending.store(store);
        }
    }

    /// Writes this engine's snapshot to the cache directory (nothing without one, when it was
    /// just restored from an identical snapshot, or when its tests are deferred), so the next
    /// open only checks stamps.
    /// Whether the lexical indexes hold enough changed documents that a merge pays (see
    /// [`crate::index::bm25`]).
    pub fn lexical_merge_due(&self) -> bool {
        self.index.merge_due()
    }

    /// Merges the lexical indexes whose merge is due, in place: answers stay exactly the same,
    /// read from fewer segments. A pass over their postings — for a caller off the answer's
    /// path. Returns whether anything was merged.
    pub fn merge_lexical(&self) -> bool {
        self.index.merge_lexical()
    }

    pub fn save_snapshot(&self) -> Result<(), snapshot::SnapshotError> {
        self.store_parses();
        let Some(dir) = self.config.cache_dir.as_deref() else {
            return Ok(());
        };
        // A first build without its tests is not what a restart should find: the update
        // that adds them is saved instead.
        if self.restored || self.deferred_tests() > 0 {
            return Ok(());
        }
        snapshot::save(
            &snapshot::path_for(dir, &self.repo.root),
            &self.repo,
            &self.sources,
            &self.index,
            &self.config.walk,
        )
    }

    /// Whether this engine came from a snapshot that matched the repository as it is.
    pub fn is_restored(&self) -> bool {
        self.restored
    }

    /// Loads the embedding model and the cached vectors, then embeds what is missing as far
    /// as `mode` allows. Never fails: without a model, ranking goes on without semantics and
    /// the answer says why.
    pub fn enable_semantic(&mut self, mode: SemanticMode) {
        if mode == SemanticMode::Off {
            self.semantic.turn_off("semantic ranking off".into());
            return;
        }
        let t = Instant::now();
        let embedder = match model_dir(&self.config.embed, self.config.cache_dir.as_deref())
            .and_then(|dir| Embedder::load(&dir, &self.config.embed))
        {
            Ok(e) => Arc::new(e),
            Err(e) => {
                tracing::info!(error = %e, "semantic ranking unavailable");
                self.semantic.unavailable(&e.to_string());
                return;
            }
        };
        self.attach_semantic(embedder);
        self.timings.semantic_load = t.elapsed();
        let t = Instant::now();
        let deadline = match mode {
            SemanticMode::Cached(d) => Some(Instant::now() + d),
            _ => None,
        };
        match self.fill_semantic(deadline, &|| false) {
            Ok(n) => self.timings.embedded = n,
            Err(e) => tracing::warn!(error = %e, "embedding failed; partial semantic coverage"),
        }
        self.timings.embed = t.elapsed();
    }

    /// Whether the vector store holds vectors for this repository, judged by 64 of its nodes.
    /// Without any, a model attached now ranks nothing until it has embedded.
    pub fn has_stored_vectors(&self) -> bool {
        self.store.as_deref().is_some_and(|store| {
            crate::embed::semantic::store_has_vectors(&self.repo.graph, &self.sources, store, 64)
        })
    }

    /// Attaches a loaded model and the vectors the store has for this repository's nodes.
    pub fn attach_semantic(&mut self, embedder: Arc<Embedder>) {
        let index = SemanticIndex::from_store(
            &self.repo.graph,
            &self.sources,
            self.store.as_deref(),
            None,
            &embedding_priority(&self.repo, &self.index),
        );
        self.semantic.attach(Attached { index, embedder });
    }

    /// A new engine for the repository as it is now, reusing this one's parses for files whose
    /// size and mtime are unchanged and that are not in `changed`, and its vectors for nodes
    /// whose embedded text is unchanged. The result equals a fresh [`Engine::open`] (the same
    /// walk, parse and link code runs; only unchanged inputs are reused). Its fresh parses
    /// reach the parse cache through [`Engine::store_parses`].
    pub fn update(
        &self,
        changed: std::collections::HashSet<String>,
        progress: Option<Progress<'_>>,
    ) -> Result<Engine, EngineError> {
        self.update_unless_cancelled(changed, progress, None)
    }

    /// [`Engine::update`] that stops, with [`WalkError::Cancelled`], at the next file or stage
    /// after `cancel` is set.
    pub fn update_unless_cancelled(
        &self,
        changed: std::collections::HashSet<String>,
        progress: Option<Progress<'_>>,
        cancel: Option<&std::sync::atomic::AtomicBool>,
    ) -> Result<Engine, EngineError> {
        let previous = self.repo.previous(&self.sources, changed);
        let (repo, sources) = repo::build_with_sources(
            &self.repo.root,
            BuildOptions {
                walk: Some(&self.config.walk),
                store: self.store.as_deref(),
                progress,
                previous: Some(&previous),
                linked: Some(&self.repo.graph),
                // Writing the cache scans its entries for files gone: the caller writes an
                // update's parses with `store_parses`, after the new snapshot answers.
                defer_parse_store: true,
                defer_tests_over: None,
                cancel,
            },
        )?;
        drop(previous);
        if repo::is_cancelled(cancel) {
            return Err(WalkError::Cancelled.into());
        }
        let kept = crate::index::kept_nodes(&self.repo.graph, &self.sources, &repo.graph, &sources);
        let (index, mut timings) = lexical_update(self, &repo, &sources, &kept, progress);
        let t = Instant::now();
        let semantic = self.semantic.attached.as_ref().map(|s| Attached {
            index: SemanticIndex::from_store(
                &repo.graph,
                &sources,
                self.store.as_deref(),
                Some(crate::embed::semantic::Previous {
                    index: &s.index,
                    kept: &kept,
                }),
                &embedding_priority(&repo, &index),
            ),
            embedder: s.embedder.clone(),
        });
        timings.semantic_load = t.elapsed();
        let mut next = Engine::assemble(
            repo,
            sources,
            index,
            timings,
            self.store.clone(),
            self.config.clone(),
        );
        next.semantic = self.semantic.carried(semantic);
        next.freshness = self.freshness.clone();
        if let Some(h) = self.history() {
            next.set_history(h);
        }
        Ok(next)
    }

    /// Reads the repository's commit history (the last `config.history_commits` commits
    /// reachable from `HEAD`; none when that is 0). It runs `git`, so callers that must answer
    /// soon read it off their answer's path and hand it over with [`Engine::set_history`].
    pub fn read_history(&self) -> Result<Option<History>, HistoryError> {
        match self.config.history_commits.0 {
            0 => Ok(None),
            n => History::read(&self.repo.root, n).map(Some),
        }
    }

    /// Lets answers use `history` from now on (replacing any read before).
    pub fn set_history(&self, history: Arc<History>) {
        *self.history.write().unwrap_or_else(|p| p.into_inner()) = Some(history);
    }

    /// Answers go on without history (a measurement's baseline: the same snapshot both ways).
    pub fn drop_history(&self) -> Option<Arc<History>> {
        self.history
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// The history answers use, if it was read.
    pub fn history(&self) -> Option<Arc<History>> {
        self.history
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Per file of the graph, the score the history gives it for `terms` (see
    /// [`History::file_scores`]); `None` without history or when no past commit matches.
    fn history_scores(&self, terms: &[(String, f32)]) -> Option<Vec<f32>> {
        let history = self.history()?;
        let g = &self.repo.graph;
        let mut scores = vec![0.0f32; g.files.len()];
        let mut any = false;
        for (path, score) in history.file_scores(terms) {
            if let Some(f) = g.file_index(path) {
                scores[f as usize] = score;
                any = true;
            }
        }
        any.then_some(scores)
    }

    /// Where today's files hold the lines that the commits `question` names added (see
    /// [`crate::history::found_again`]); empty without history. A commit git cannot show is
    /// left out.
    fn named_commit_lines(&self, question: &str) -> Vec<(u32, u32)> {
        let Some(history) = self.history() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for id in history.named_commits(question) {
            match crate::history::added_lines(&self.repo.root, id) {
                Ok(added) => out.extend(crate::history::found_again(
                    &self.repo.graph,
                    &self.sources,
                    &added,
                )),
                Err(e) => tracing::debug!(commit = id, error = %e, "named commit not read"),
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Paths whose size or mtime differ from this snapshot, or that appeared or went away —
    /// by listing the repository (no file is read). For when no watcher runs.
    pub fn stale_paths(&self) -> Result<Vec<String>, EngineError> {
        let listing = crate::walk::list(&self.repo.root, &self.config.walk)?;
        let g = &self.repo.graph;
        let mut stale = Vec::new();
        let mut listed = std::collections::HashSet::new();
        for l in &listing.files {
            listed.insert(l.path.as_str());
            match g.file_index(&l.path) {
                Some(i) => {
                    let st = self.repo.stamps[i as usize];
                    if st.size != l.size || st.mtime_ns != l.mtime_ns {
                        stale.push(l.path.clone());
                    }
                }
                // Newly listed, or skipped last time for its content: either may be source now.
                None => {
                    if !self
                        .repo
                        .walk
                        .skipped
                        .iter()
                        .any(|(p, _, r)| p == &l.path && *r != crate::walk::SkipReason::Unreadable)
                    {
                        stale.push(l.path.clone());
                    }
                }
            }
        }
        for f in &g.files {
            if !listed.contains(f.path.as_str()) {
                stale.push(f.path.clone());
            }
        }
        Ok(stale)
    }

    /// Embeds missing nodes, batch by batch, until `deadline`, until none is missing, or until
    /// `give_way` says other work is waiting (checked before each batch). Through `&self`:
    /// readers of a shared engine see vectors as they land. Returns how many were embedded.
    pub fn fill_semantic(
        &self,
        deadline: Option<Instant>,
        give_way: &dyn Fn() -> bool,
    ) -> Result<usize, EmbedError> {
        let Some(s) = &self.semantic.attached else {
            return Ok(0);
        };
        s.index.fill(
            &self.repo.graph,
            &self.sources,
            &s.embedder,
            self.store.as_deref(),
            deadline,
            give_way,
        )
    }

    /// Where this repository's memory goes, per structure: sources, graph, indexes, vectors,
    /// history (see [`crate::memory`]).
    pub fn memory_use(&self) -> Vec<crate::memory::MemoryPart> {
        let vectors = self.semantic.memory_bytes();
        let mut parts = crate::memory::parts(
            &self.repo.graph,
            &self.sources,
            &self.index,
            &self.lines,
            vectors,
        );
        parts.push(crate::memory::MemoryPart {
            name: "history",
            bytes: self.history().map_or(0, |h| h.heap_bytes()),
        });
        parts
    }

    /// The bytes this repository holds: the sum of [`Engine::memory_use`].
    pub fn memory_bytes(&self) -> usize {
        self.memory_use().iter().map(|p| p.bytes).sum()
    }

    /// Whether the semantic signal would be used for this question (short once the
    /// repository's issue-template lines are dropped): callers skip loading the model if not.
    pub fn uses_semantic(&self, question: &str) -> bool {
        !is_long_question(&self.boilerplate.strip(question))
    }

    /// A navigation answer when `q` asks for one ("who calls X") and X names a definition.
    fn navigation_for(&self, q: &Query) -> Option<Answer> {
        let (direction, target) = crate::navigate::route::route(&q.question)?;
        let nav = crate::navigate::Navigation {
            budget: q.budget,
            encoding: q.encoding,
            freshness: q.freshness.clone(),
            ..crate::navigate::Navigation::new(target, direction)
        };
        self.navigate(&nav).ok()
    }

    /// Line starts of file `file`, computed once and kept.
    pub(crate) fn line_starts(&self, file: u32) -> std::borrow::Cow<'_, [usize]> {
        self.lines.starts(file, &self.sources[file as usize])
    }

    pub(crate) fn repo_name(&self) -> String {
        self.repo
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.repo.root.display().to_string())
    }

    pub fn query(&self, q: &Query) -> Answer {
        if let Some(answer) = self.navigation_for(q) {
            return answer;
        }
        let g = &self.repo.graph;
        let question = self.boilerplate.strip(&q.question);
        let query_terms = crate::index::bm25::query_terms(&question);
        let long = crate::rank::is_long_question(&query_terms);
        let sims = if long {
            None
        } else {
            self.semantic.similarities(&question)
        };
        let t = Instant::now();
        let history = self.history_scores(&query_terms);
        let commit_lines = self.named_commit_lines(&question);
        let evidence = Evidence {
            semantic: sims.as_deref(),
            history: history.as_deref(),
            cited: &commit_lines,
        };
        let mut ranked = rank(
            g,
            &self.index,
            &question,
            &query_terms,
            evidence,
            q.ranker,
            &self.config.rank,
        );
        tracing::debug!(us = t.elapsed().as_micros() as u64, "ranked");
        let mut already_shown = Vec::new();
        let mut changed = std::collections::HashSet::new();
        if !q.exclude.is_empty() {
            let mut position = 0;
            ranked.retain(|r| {
                position += 1;
                let id = node_id(g, r.node);
                let keep = match q.exclude.get(&id) {
                    None => true,
                    Some(0) => false,
                    Some(&seen) => {
                        let now = crate::index::node_version(g, &self.sources, r.node) != seen;
                        if now {
                            changed.insert(r.node);
                        }
                        now
                    }
                };
                // Name only the excluded nodes that ranked near the top: the ones the answer
                // would have shown.
                if !keep && position <= 12 {
                    already_shown.push(id);
                }
                keep
            });
        }
        // Query terms weighted by rarity: they pick the excerpt of a function too long to show.
        let content = self.index.content.get();
        let terms: std::collections::HashMap<String, f32> = query_terms
            .iter()
            .filter_map(|(t, w)| content.idf(t).map(|idf| (t.clone(), w * idf)))
            .collect();
        let provenance = Provenance {
            repo: self.repo_name(),
            freshness: q
                .freshness
                .clone()
                .unwrap_or_else(|| self.freshness.clone()),
            semantic_coverage: self.semantic.coverage(),
            semantic_note: if long {
                Some("semantic signal not used for long questions: their words decide".into())
            } else if !self.semantic.has_model()
                && let Some(now) = &q.semantic_note
            {
                Some(format!("{now}; ranking without semantics"))
            } else {
                self.semantic.note()
            },
            already_shown,
            files: g.files.len(),
        };
        // Lines the question cites or quotes, or that the commits it names added, place a
        // long function's window, as its words do.
        let mut cited =
            crate::rank::locations::resolve(&crate::rank::locations::locations(&question), g).lines;
        cited.extend(&commit_lines);
        cited.extend(crate::rank::quoted::quoted_lines(
            g,
            &content,
            &self.sources,
            &self.lines,
            &question,
        ));
        cited.sort_unstable();
        cited.dedup();
        let packer = Packer {
            g,
            sources: &self.sources,
            lines: &self.lines,
            enc: q.encoding,
            terms: &terms,
            cited: &cited,
            tuning: &self.config.pack,
        };
        let mut a = crate::pack::fit_answer(
            &packer,
            &ranked,
            q.budget,
            |selection| {
                crate::pack::fit_frame(q.budget, q.encoding, |frame| {
                    answer(RenderInput {
                        g,
                        sources: &self.sources,
                        lines: &self.lines,
                        ranked: &ranked,
                        selection: selection.clone(),
                        frame,
                        provenance: provenance.clone(),
                        budget: q.budget,
                        enc: q.encoding,
                        show_savings: q.show_savings,
                        changed: &changed,
                    })
                })
            },
            |a| a.tokens,
        );
        tracing::debug!(
            us = t.elapsed().as_micros() as u64,
            "ranked, selected and rendered"
        );
        a.ranking = crate::render::explain(g, &ranked, q.explain);
        a.confidence = match_strength(&query_terms, &a.text, |t| content.idf(t));
        a.names_repo = ranked
            .iter()
            .take(MENTION_POOL)
            .any(|r| r.ranks.mention.is_some());
        let evidence = crate::matching::Evidence {
            strength: a.confidence,
            names_repo: a.names_repo,
            together: crate::matching::terms_together(
                g,
                &self.sources,
                &self.lines,
                &a,
                &query_terms,
            ),
            similarity: sims.as_ref().and_then(|s| {
                ranked
                    .iter()
                    .take(10)
                    .filter_map(|r| s.get(r.node as usize).copied())
                    .filter(|x| x.is_finite())
                    .reduce(f32::max)
            }),
        };
        crate::matching::judge(&mut a, evidence, q.encoding, q.budget);
        a
    }

    /// Every candidate the ranker would consider for `question`, with its features (no
    /// semantics: the model is trained without vectors).
    pub fn candidate_features(&self, question: &str) -> Vec<CandidateFeatures> {
        let g = &self.repo.graph;
        let question = self.boilerplate.strip(question);
        let terms = crate::index::bm25::query_terms(&question);
        let history = self.history_scores(&terms);
        crate::rank::candidate_features(
            g,
            &self.index,
            &question,
            &terms,
            history.as_deref(),
            &self.config.rank,
        )
        .into_iter()
        .map(|(node, x)| {
            let def = g.def(node);
            CandidateFeatures {
                id: node_id(g, node),
                path: g.file_of(node).path.clone(),
                kind: def.kind.name(),
                start: def.start_line,
                end: def.end_line,
                members: g
                    .members(node)
                    .into_iter()
                    .map(|m| (g.def(m).start_line, g.def(m).end_line))
                    .collect(),
                x: x.to_vec(),
            }
        })
        .collect()
    }

    /// The self-contained HTML page of this repository's graph; with a question, the nodes its
    /// answer (at 4000 tokens) would show are highlighted.
    pub fn graph_page(&self, question: Option<&str>) -> String {
        let highlight: Vec<String> = question
            .filter(|q| !q.trim().is_empty())
            .map(|q| {
                self.query(&Query {
                    question: q.to_string(),
                    budget: 4000,
                    ..Query::default()
                })
                .nodes
                .into_iter()
                .map(|n| n.id)
                .collect()
            })
            .unwrap_or_default();
        crate::render::graph::page(&self.repo.graph, &self.repo_name(), &highlight)
    }

    /// The codebase map as Markdown (see [`crate::render::map`]).
    pub fn codebase_map(&self) -> String {
        crate::render::map::codebase_map(&self.repo.graph, &self.repo_name())
    }

    /// The whole source of nodes named by id (`path#Qualified.name[@line]`) or by range
    /// (`path:start-end`).
    pub fn expand(&self, ids: &[String]) -> Result<String, EngineError> {
        let g = &self.repo.graph;
        let mut out = String::new();
        for id in ids {
            let chars = id.chars().count();
            if chars > MAX_ID_CHARS {
                return Err(EngineError::IdTooLong(chars));
            }
            if let Some(node) = (0..g.nodes.len() as u32).find(|&n| node_id(g, n) == *id) {
                let file = g.nodes[node as usize].file;
                let starts = line_starts(&self.sources[file as usize]);
                out.push_str(&heading(g, node));
                out.push_str(&render(g, &self.sources, node, Mode::Whole, &starts).text);
                out.push_str(FENCE_CLOSE);
                continue;
            }
            let (path, range) = id.rsplit_once(':').ok_or_else(|| unknown_id(id))?;
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            let (Ok(a), Ok(b), Some(file)) =
                (a.parse::<u32>(), b.parse::<u32>(), g.file_index(path))
            else {
                return Err(unknown_id(id));
            };
            let src = &self.sources[file as usize];
            let starts = line_starts(src);
            let lines = g.files[file as usize].lines;
            // A range past the end (or backwards) would show an empty fence as if it held code.
            if a.max(1) > lines || b < a {
                return Err(EngineError::LinesOutOfRange {
                    path: path.to_string(),
                    start: a,
                    end: b,
                    lines,
                });
            }
            let lang = g.files[file as usize].lang;
            out.push_str(&range_heading(path, a, b, None, lang));
            for (i, line) in crate::lines::lines_of(src, &starts, a.max(1), b.max(a))
                .iter()
                .enumerate()
            {
                out.push_str(&format!("{}\t{}\n", a.max(1) + i as u32, line));
            }
            out.push_str(FENCE_CLOSE);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::temp_repo;

    #[test]
    fn recently_changed_files_are_embedded_first() {
        let dir = temp_repo("priority", &[]);
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..12 {
            std::fs::write(
                dir.join(format!("m{i:02}.py")),
                format!("def work_{i}(x):\n    y = x + 1\n    return y\n"),
            )
            .unwrap();
        }
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for i in 0..12 {
            let f = std::fs::File::options()
                .append(true)
                .open(dir.join(format!("m{i:02}.py")))
                .unwrap();
            f.set_modified(if i == 7 {
                old + std::time::Duration::from_secs(600)
            } else {
                old
            })
            .unwrap();
        }
        let engine = Engine::open(&dir, Default::default()).unwrap();
        let ix = SemanticIndex::from_store(
            &engine.repo.graph,
            &engine.sources,
            None,
            None,
            &embedding_priority(&engine.repo, &engine.index),
        );
        let first = ix.pending()[0];
        assert_eq!(engine.repo.graph.file_of(first).path, "m07.py");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn any_question_at_any_budget_answers_within_it() {
        let dir = std::env::temp_dir().join(format!("fittok-engine-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("src/lib.rs"),
            "/// Adds.\npub fn add(a: i32, b: i32) -> i32 { a + b }\npub struct Calc;\nimpl Calc {\n    pub fn total(&self, xs: &[i32]) -> i32 { xs.iter().fold(0, |a, &b| add(a, b)) }\n}\n",
        )
        .unwrap();
        std::fs::write(dir.join("README.md"), "# Calc\n\nAdds numbers.\n").unwrap();
        let engine = Engine::open(&dir, Default::default()).unwrap();
        let questions = [
            "",
            "   ",
            "how does Calc total numbers?",
            "Étrange_nom ÉcoleNormale 東京 `add` --flag src/lib.rs:3",
            &"word ".repeat(2000),
        ];
        let rankers = [
            crate::rank::Ranker::Auto,
            crate::rank::Ranker::Fusion,
            crate::rank::Ranker::Learned,
        ];
        for (q, ranker) in questions.iter().flat_map(|q| rankers.map(|r| (q, r))) {
            for budget in [0, 1, 30, 120, 1000] {
                let a = engine.query(&Query {
                    question: q.to_string(),
                    budget,
                    ranker,
                    ..Query::default()
                });
                assert!(
                    budget == 0 || a.tokens <= budget,
                    "{q:?} {budget}: {}",
                    a.tokens
                );
                assert_eq!(a.tokens, crate::tokens::count(Encoding::Cl100k, &a.text));
            }
        }
        // Every ranker shows `Calc::total`'s code: on its own, or inside `impl Calc` shown
        // whole (the learned ranker puts the impl first on this tiny repository).
        for ranker in rankers {
            let a = engine.query(&Query {
                question: "total of numbers in Calc".into(),
                budget: 1000,
                ranker,
                ..Query::default()
            });
            assert!(
                a.text.contains("pub fn total(&self, xs: &[i32])"),
                "{ranker:?}: {}",
                a.text
            );
        }
        assert!(
            engine
                .expand(&["src/lib.rs#Calc::total".into()])
                .unwrap()
                .contains("fold")
        );
        assert!(engine.expand(&["nope#x".into()]).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_cold_builds_parses_reach_the_cache_when_asked_not_before() {
        let dir = temp_repo(
            "deferred-parses",
            &[
                ("src/a.py", "def alpha(x):\n    return x\n"),
                (
                    "src/b.py",
                    "from a import alpha\n\ndef beta():\n    return alpha(2)\n",
                ),
            ],
        );
        let cache = dir.with_extension("cache");
        let _ = std::fs::remove_dir_all(&cache);
        let config = Arc::new(Config {
            cache_dir: Some(cache.clone()),
            ..Config::default()
        });
        let reused = || {
            Engine::open(&dir, config.clone())
                .unwrap()
                .repo
                .timings
                .reused
        };
        // Nothing is written while the first answer is prepared …
        assert_eq!(reused(), 0);
        assert_eq!(reused(), 0);
        // … and everything once the engine is told to.
        Engine::open(&dir, config.clone()).unwrap().store_parses();
        assert_eq!(reused(), 2);
        // An update's parse waits in the same way: the edited file is parsed afresh by every
        // cold build until the updated engine writes it. (An open engine holds the store, so
        // each is dropped before the next opens it.)
        let update = |source: &str, store: bool| {
            let engine = Engine::open(&dir, config.clone()).unwrap();
            engine.store_parses();
            std::fs::write(dir.join("src/a.py"), source).unwrap();
            let updated = engine
                .update(["src/a.py".to_string()].into_iter().collect(), None)
                .unwrap();
            if store {
                updated.store_parses();
            }
        };
        update("def alpha(x, y=0):\n    return x + y\n", false);
        assert_eq!(reused(), 1);
        update("def alpha(x, y=1):\n    return x - y\n", true);
        assert_eq!(reused(), 2);
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&cache);
    }

    #[test]
    fn a_first_build_without_tests_becomes_the_full_one_by_an_update() {
        let dir = temp_repo(
            "sources-first",
            &[
                (
                    "src/shop.py",
                    "def discount(price):\n    return price - 1\n",
                ),
                (
                    "tests/test_shop.py",
                    "from shop import discount\n\ndef test_discount():\n    assert discount(3) == 2\n",
                ),
            ],
        );
        let open =
            |over| Engine::open_sources_first(&dir, Default::default(), None, None, over).unwrap();
        // Fewer test bytes than the threshold: nothing is deferred.
        assert_eq!(open(1 << 20).deferred_tests(), 0);
        let first = open(1);
        assert_eq!(first.deferred_tests(), 1);
        let paths: Vec<&str> = first
            .repo
            .graph
            .files
            .iter()
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(paths, vec!["src/shop.py"]);
        assert_eq!(first.repo.timings.rebuilt, 1);
        // The deferred file is what a check for changes finds, and the update adds it.
        let stale = first.stale_paths().unwrap();
        assert_eq!(stale, vec!["tests/test_shop.py".to_string()]);
        let full = first.update(stale.into_iter().collect(), None).unwrap();
        assert_eq!(full.deferred_tests(), 0);
        let fresh = Engine::open(&dir, Default::default()).unwrap();
        assert_eq!(full.repo.graph, fresh.repo.graph);
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn ask(dir: &Path, question: &str, budget: usize) -> Answer {
        ask_with(dir, question, budget, crate::rank::Ranker::default())
    }

    fn ask_with(dir: &Path, question: &str, budget: usize, ranker: crate::rank::Ranker) -> Answer {
        Engine::open(dir, Default::default())
            .unwrap()
            .query(&Query {
                question: question.into(),
                budget,
                ranker,
                ..Query::default()
            })
    }

    #[test]
    fn a_referenced_struct_shows_its_first_fields_as_written() {
        // A struct too long to show beside the method that uses it.
        let fields: String = (0..60)
            .map(|i| format!("\tfield{i} map[string][]int // the {i}th\n"))
            .collect();
        let steps: String = (0..40)
            .map(|i| format!("\tchain = append(chain, step{i})\n"))
            .collect();
        let src = format!(
            "package rest\n\ntype engine struct {{\n{fields}}}\n\nfunc (ng *engine) bindRoute(chain []int) []int {{\n{steps}\treturn chain\n}}\n"
        );
        let dir = temp_repo("ref-struct", &[("rest/engine.go", src.as_str())]);
        let a = ask(&dir, "bindRoute appends every step to the chain", 1500);
        let r = a.references.iter().find(|r| r.id.ends_with("engine"));
        let r = r.unwrap_or_else(|| panic!("engine referenced in\n{}", a.text));
        assert_eq!(
            r.signature,
            "type engine struct {\n\tfield0 map[string][]int // the 0th\n\tfield1 map[string][]int // the 1th\n\tfield2 map[string][]int // the 2th\n…"
        );
        assert!(
            a.text
                .contains("- rest/engine.go:3 type engine struct {\n  \tfield0 map[string][]int"),
            "{}",
            a.text
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_small_answer_keeps_one_signature_and_one_pointer_for_code() {
        // Ten long retry steps in ten files, each calling a helper of its own: more relevant
        // code than 1500 tokens hold, and more referenced definitions and pointers than fit.
        let body: String = (0..30)
            .map(|k| format!("    delay = delay * 2 + {k}\n"))
            .collect();
        let files: Vec<(String, String)> = (0..10)
            .map(|i| {
                (
                    format!("pkg/step{i}.py"),
                    format!(
                        "def retry_step_{i}(delay):\n    delay = backoff_helper_{i}(delay)\n{body}    return delay\n\n\ndef backoff_helper_{i}(delay):\n    return delay\n"
                    ),
                )
            })
            .collect();
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, s)| (p.as_str(), s.as_str()))
            .collect();
        let dir = temp_repo("small-frame", &refs);
        let small = ask(&dir, "retry step delay", 1500);
        assert!(small.references.len() <= 1, "{}", small.text);
        assert_eq!(small.pointers.len(), 1, "{}", small.text);
        // The map still names two files: one would not say which other file matters.
        assert_eq!(small.map.len(), 2, "{}", small.text);
        // The frame grows with the budget: one of each per 1000 tokens.
        let large = ask(&dir, "retry step delay", 4000);
        assert!(large.pointers.len() > 1, "{}", large.text);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_best_files_header_comes_with_its_code() {
        let dir = temp_repo(
            "header",
            &[(
                "pkg/retry.py",
                "\"\"\"Retry policy.\"\"\"\nimport time\nfrom pkg.clock import monotonic_deadline\n\nMAX_RETRIES = 5\n\n\ndef retry_request(send, attempts):\n    for i in range(attempts):\n        if send():\n            return True\n        time.sleep(2 ** i)\n    return False\n",
            )],
        );
        let a = ask(&dir, "how is a request retried", 1500);
        assert!(a.text.contains("def retry_request"), "{}", a.text);
        assert!(
            a.text.contains("from pkg.clock import monotonic_deadline")
                && a.text.contains("MAX_RETRIES = 5"),
            "{}",
            a.text
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_files_blocks_are_shown_together_under_its_heading_in_line_order() {
        let dir = temp_repo(
            "one-heading",
            &[
                (
                    "src/net/retry/policy.py",
                    "def retry_limit(attempt):\n    return attempt < 5\n\n\nclass Other:\n    pass\n\n\ndef retry_delay(attempt):\n    return 2 ** attempt\n",
                ),
                (
                    "src/io/policy.py",
                    "def retry_buffer_size():\n    return 4096\n",
                ),
            ],
        );
        let engine = Engine::open(&dir, Default::default()).unwrap();
        let a = engine.query(&Query {
            question: "retry delay and retry limit".into(),
            budget: 1000,
            ..Query::default()
        });
        let headings: Vec<&str> = a.text.lines().filter(|l| l.starts_with("### ")).collect();
        assert_eq!(
            headings
                .iter()
                .filter(|h| h.contains("retry/policy.py"))
                .count(),
            1,
            "{}",
            a.text
        );
        assert!(
            headings.contains(&"### src/net/retry/policy.py"),
            "{}",
            a.text
        );
        // Under it, both functions in the file's order, a `⋮` between them, in one fence.
        let code = a
            .text
            .split("### src/net/retry/policy.py\n")
            .nth(1)
            .unwrap();
        let fenced = code.split("```\n").next().unwrap_or_default();
        let limit = fenced
            .find("return attempt < 5")
            .expect("retry_limit shown");
        let delay = fenced
            .find("return 2 ** attempt")
            .expect("retry_delay shown");
        assert!(
            limit < delay && fenced[limit..delay].contains("⋮\n"),
            "{}",
            a.text
        );
        // A block's lines expand by the file's path and their numbers.
        let shown = engine
            .expand(&["src/net/retry/policy.py:9-10".into()])
            .unwrap();
        assert!(shown.contains("9\tdef retry_delay"), "{shown}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Which of two places — a file and a snippet of its source — the fusion-ranked answer to
    /// `question` shows first, by its blocks' order (the text shows a file's blocks in line
    /// order); both unshown fails.
    fn which_first(dir: &Path, question: &str, markers: [(&str, &str); 2]) -> usize {
        let a = ask_with(dir, question, 4000, crate::rank::Ranker::Fusion);
        let at = markers.map(|(path, snippet)| {
            let src = std::fs::read_to_string(dir.join(path)).unwrap();
            let line = 1 + src.lines().position(|l| l.contains(snippet)).unwrap() as u32;
            a.nodes
                .iter()
                .position(|n| n.path == path && n.start_line <= line && line <= n.end_line)
                .unwrap_or(usize::MAX)
        });
        assert!(at[0].min(at[1]) < usize::MAX, "{}", a.text);
        usize::from(at[1] < at[0])
    }

    #[test]
    fn help_text_ranks_below_the_code_unless_docs_are_asked_for() {
        let help: String = (0..12)
            .map(|i| format!("Multiple patterns are combined; each pattern is searched {i}.\n"))
            .collect();
        let dir = temp_repo(
            "prose",
            &[(
                "src/app.rs",
                &format!(
                    "fn flag_regexp() {{\n    const LONG: &str = \"\\\n{help}\";\n}}\n\npub fn combine_patterns(patterns: &[String]) -> String {{\n    patterns.join(\"|\")\n}}\n"
                ),
            )],
        );
        // Fusion's demotion of prose is what this holds. The learned ranker has no such rule
        // and trusts body BM25 more: on this two-function file it puts the function holding
        // the help text first (the help text itself, a prose constant, still comes after the
        // code in both).
        let code_then = [
            ("src/app.rs", "fn combine_patterns"),
            ("src/app.rs", "const LONG"),
        ];
        for (question, first) in [
            ("how are multiple patterns combined", 0),
            ("where are multiple patterns combined in the docs", 1),
        ] {
            assert_eq!(which_first(&dir, question, code_then), first, "{question}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn examples_rank_below_the_implementation_unless_asked_for() {
        // The example repeats the question's words more often than the implementation does:
        // on words alone it would come first.
        let dir = temp_repo(
            "usage",
            &[
                (
                    "src/spinner.rs",
                    "pub struct Spinner {\n    frames: Vec<String>,\n    at: usize,\n}\n\nimpl Spinner {\n    /// The next frame: the spinner ticks through its frames in a loop.\n    pub fn tick(&mut self) -> &str {\n        self.at = (self.at + 1) % self.frames.len();\n        &self.frames[self.at]\n    }\n}\n",
                ),
                (
                    "examples/spinner_tick.rs",
                    "fn spinner_tick_frames() {\n    let mut spinner = Spinner::default();\n    for _ in 0..10 {\n        println!(\"spinner tick: {}\", spinner.tick());\n        println!(\"the spinner ticks through its frames\");\n    }\n}\n",
                ),
            ],
        );
        let code_then = [
            ("src/spinner.rs", "pub fn tick"),
            ("examples/spinner_tick.rs", "fn spinner_tick_frames"),
        ];
        for (question, first) in [
            ("how does the spinner tick through its frames", 0),
            (
                "is there an example of the spinner tick through its frames",
                1,
            ),
        ] {
            assert_eq!(which_first(&dir, question, code_then), first, "{question}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_uncapped_answer_is_packed_like_a_budget_of_its_own_length() {
        // One function far longer than the rest: shown whole, it would be most of the answer.
        // Uncapped, the answer is as long as the relevance cliff makes it, and that length is
        // packed as a budget is: the long function as an excerpt, the short ones whole.
        let long_body: String = (0..120)
            .map(|i| format!("    delay_{i} = backoff_step(delay, {i}) + jitter_{i}\n"))
            .collect();
        let dir = temp_repo(
            "uncapped",
            &[
                (
                    "retry/backoff.py",
                    &format!(
                        "def backoff_schedule(delay):\n    \"\"\"Backoff delays of every retry.\"\"\"\n{long_body}    return delay\n"
                    ),
                ),
                (
                    "retry/limit.py",
                    "def backoff_limit(delay):\n    \"\"\"The largest backoff delay a retry waits.\"\"\"\n    return min(delay, 60)\n",
                ),
                (
                    "retry/reset.py",
                    "def backoff_reset(delay):\n    \"\"\"A successful retry resets the backoff delay.\"\"\"\n    return 0 * delay\n",
                ),
            ],
        );
        let a = ask(&dir, "backoff delay of a retry", 0);
        for short in ["def backoff_limit", "def backoff_reset"] {
            assert!(a.text.contains(short), "{}", a.text);
        }
        assert!(
            a.text
                .contains("more lines: expand retry/backoff.py#backoff_schedule"),
            "{}",
            a.text
        );
        assert!(!a.text.contains("delay_119 ="), "{}", a.text);
        assert_eq!(a.budget, 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_cut_python_function_shows_code_not_its_docstring() {
        let doc: String = (0..120)
            .map(|i| format!("    Parameter notes line {i} about the temperature model.\n"))
            .collect();
        let body: String = (0..60)
            .map(|i| format!("    step_{i} = compute(temperature, {i})\n"))
            .collect();
        let src = format!(
            "def fuentes(temperature):\n    \"\"\"Fuentes model.\n\n{doc}    \"\"\"\n{body}    return step_59\n"
        );
        let dir = temp_repo("docstring", &[("model.py", &src)]);
        let a = ask(&dir, "fuentes temperature compute", 1200);
        assert!(a.text.contains("def fuentes"), "{}", a.text);
        assert!(a.text.contains("= compute(temperature"), "{}", a.text);
        assert!(!a.text.contains("Parameter notes line 60"), "{}", a.text);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_short_question_naming_a_test_gets_it_first_from_either_ranker() {
        let dir = temp_repo(
            "named-test",
            &[
                (
                    "src/main/scala/a/Retry.scala",
                    "package a\nobject retry_backoff_policy { def delay(n: Int) = n * 2 }\n",
                ),
                (
                    "src/test/scala/a/RetrySpec.scala",
                    "package a\nobject retry_backoff_policy_spec { def check() = retry_backoff_policy.delay(1) }\n",
                ),
            ],
        );
        for ranker in [crate::rank::Ranker::Fusion, crate::rank::Ranker::Learned] {
            let a = ask_with(&dir, "retry_backoff_policy_spec", 300, ranker);
            let first = a.text.split("### ").nth(1).unwrap_or_default();
            assert!(
                first.starts_with("src/test/scala/a/RetrySpec.scala"),
                "{ranker:?}: {}",
                a.text
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_big_container_after_the_first_block_is_a_pointer_not_its_first_lines() {
        let src = crate::testing::ledger_source();
        let dir = temp_repo("container-head", &[("books.py", &src)]);
        let a = ask(&dir, "parse amount ledger", 1500);
        assert!(a.text.contains("def parse_amount"), "{}", a.text);
        assert!(!a.text.contains("Ledger of amounts"), "{}", a.text);
        assert!(a.text.contains("→ books.py#Ledger"), "{}", a.text);
        // Not even as the first block while anything else can be shown
        // (`pack::tests::a_big_containers_head_is_shown_only_when_nothing_else_can_be`).
        let a = ask(&dir, "Ledger", 300);
        assert!(!a.text.contains("Ledger of amounts"), "{}", a.text);
        assert!(a.text.contains("→ books.py#Ledger"), "{}", a.text);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Background embedding gives way between batches: with `give_way` true nothing is
    /// embedded; when it turns true after the first batch, embedding stops there.
    #[test]
    fn embedding_gives_way_between_batches() {
        let model = std::env::var_os("FITTOK_EMBED_MODEL")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.model/all-MiniLM-L6-v2")
            });
        let embedder = Arc::new(
            Embedder::load(&model, &Default::default())
                .unwrap_or_else(|e| panic!("{e}: run scripts/fetch-model.sh")),
        );
        let src: String = (0..400)
            .map(|i| format!("def handler_{i}(request):\n    return request.get({i})\n\n\n"))
            .collect();
        let dir = temp_repo("give-way", &[("handlers.py", &src)]);
        let mut engine = Engine::open(&dir, Default::default()).unwrap();
        engine.attach_semantic(embedder);
        let missing = engine.semantic.missing();
        assert!(missing > 100, "{missing}");
        assert_eq!(engine.fill_semantic(None, &|| true).unwrap(), 0);
        assert_eq!(engine.semantic.missing(), missing);
        let batches = std::sync::atomic::AtomicUsize::new(0);
        let after_one = || batches.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= 1;
        let one = engine.fill_semantic(None, &after_one).unwrap();
        assert!(one > 0 && one < missing, "{one} of {missing}");
        assert_eq!(engine.semantic.missing(), missing - one);
    }
}
