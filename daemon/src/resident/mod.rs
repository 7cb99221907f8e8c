//! Many repositories resident at once, for the daemon: each an immutable [`Engine`] snapshot
//! behind an `Arc`, swapped whole, so a query never waits for indexing; one background thread
//! embeds what the cache did not have; least-recently-used repositories leave memory when the
//! budget is exceeded (their caches stay on disk).
//!
//! Invariants: a repository is built at most once at a time (later callers wait for that
//! build and share it); a published snapshot is never mutated except for vectors landing in
//! its semantic index (set-once slots); no protobuf here — the service translates.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

mod budget;
mod embedder;
mod history;
mod live;
mod model;
mod persist;
#[cfg(test)]
mod release_tests;
mod store;

use budget::release_free_memory;
pub use budget::{LeftMemory, rss_bytes};
use embedder::{embed_loop, lower_priority};
use persist::{SNAPSHOT_WAIT, SNAPSHOTS_SAVING, merge_in_background, save_snapshot_in_background};

pub use live::LiveStatus;

use fittok_engine::embed::Embedder;
use fittok_engine::engine::{Engine, EngineError};
use fittok_engine::repo::Progress;
use fittok_engine::store::Store;

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// One repository in memory.
pub struct Resident {
    pub root: PathBuf,
    snapshot: RwLock<Option<Arc<Engine>>>,
    /// Held while building, so concurrent first queries share one build.
    building: Mutex<()>,
    pub last_used_ms: AtomicU64,
    pub indexed_at_ms: AtomicU64,
    indexing: AtomicBool,
    /// Watching, pending changes, updates: see [`live`].
    live: Mutex<live::Live>,
    /// Snapshots published by updates after the first build.
    pub updates: AtomicU64,
    /// Vectors the background embedder computed for this repository.
    pub embedded: AtomicU64,
    /// A slice of embedding is under way: its vectors may be visible before `embedded`
    /// counts them.
    pub embedding_slice: AtomicBool,
    /// A merge of the lexical indexes is under way (see [`merge_in_background`]).
    merging: AtomicBool,
    /// The commit history, once read (see [`history`]); every snapshot published gets it.
    history: Mutex<Option<Arc<fittok_engine::history::History>>>,
    /// When the history was last read or checked against `HEAD` (0: never).
    history_checked_ms: AtomicU64,
    history_loading: AtomicBool,
    /// Dropped from the resident set ([`Residents::forget`]): it holds nothing and takes no
    /// snapshot, whoever still has it (the embedder's queue, an update under way).
    released: AtomicBool,
}

impl Resident {
    fn new(root: PathBuf) -> Resident {
        Resident {
            root,
            snapshot: RwLock::new(None),
            building: Mutex::new(()),
            last_used_ms: AtomicU64::new(now_ms()),
            indexed_at_ms: AtomicU64::new(0),
            indexing: AtomicBool::new(false),
            live: Mutex::new(live::Live::default()),
            updates: AtomicU64::new(0),
            embedded: AtomicU64::new(0),
            merging: AtomicBool::new(false),
            embedding_slice: AtomicBool::new(false),
            history: Mutex::new(None),
            history_checked_ms: AtomicU64::new(0),
            history_loading: AtomicBool::new(false),
            released: AtomicBool::new(false),
        }
    }

    /// The current snapshot, if built.
    pub fn snapshot(&self) -> Option<Arc<Engine>> {
        self.snapshot.read().ok().and_then(|s| s.clone())
    }

    pub fn is_indexing(&self) -> bool {
        self.indexing.load(Ordering::Relaxed)
    }

    /// The commit history answers use, once read.
    pub fn history(&self) -> Option<Arc<fittok_engine::history::History>> {
        self.history
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn publish(&self, engine: Arc<Engine>) {
        if engine.history().is_none()
            && let Some(h) = self.history()
        {
            engine.set_history(h);
        }
        // Checked under the lock `release` takes after setting the flag: a snapshot is either
        // published before the release clears it, or not at all.
        if let Ok(mut s) = self.snapshot.write()
            && !self.released.load(Ordering::SeqCst)
        {
            *s = Some(engine);
        }
        self.indexed_at_ms.store(now_ms(), Ordering::Relaxed);
    }

    /// Keeps the history read for this repository, unless it was released meanwhile.
    fn keep_history(&self, history: Arc<fittok_engine::history::History>) {
        let mut h = self.history.lock().unwrap_or_else(|p| p.into_inner());
        if !self.released.load(Ordering::SeqCst) {
            *h = Some(history);
        }
    }

    /// Lets go of the snapshot and the history, now and for good: memory a dropped
    /// repository held is freed when the work still holding this resident ends its slice,
    /// not when that work runs out (the embedder may have hours of it).
    fn release(&self) {
        self.released.store(true, Ordering::SeqCst);
        if let Ok(mut s) = self.snapshot.write() {
            *s = None;
        }
        *self.history.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// What a caller needs of a repository's snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Every file (expanding an id, a graph page, an explicit index, a question about tests).
    Everything,
    /// An answer soon: a cold build may leave the tests for the update right after it.
    SourcesFirst,
}

/// Settings of the resident set.
#[derive(Debug, Clone)]
pub struct ResidentOptions {
    /// Beyond this many bytes (estimated), least-recently-used repositories leave memory.
    pub memory_budget: usize,
    /// Load the embedding model and embed in background.
    pub semantic: bool,
    /// Watch resident repositories for changes (else check before each answer).
    pub autowatch: bool,
    /// The engine's configuration and where the model comes from.
    pub config: crate::config::DaemonConfig,
}

impl Default for ResidentOptions {
    fn default() -> Self {
        ResidentOptions {
            memory_budget: 2 << 30,
            semantic: true,
            autowatch: true,
            config: crate::config::DaemonConfig {
                engine: Default::default(),
                max_budget: 0,
                defer_tests_over: crate::config::DEFAULT_DEFER_TESTS_OVER,
                model_download: None,
                no_download_note: None,
                llm_api_key: None,
                set_vars: Vec::new(),
                file_vars: Vec::new(),
                file: Default::default(),
            },
        }
    }
}

/// The resident repositories of one daemon.
pub struct Residents {
    repos: Mutex<HashMap<PathBuf, Arc<Resident>>>,
    /// The on-disk cache, once open; repositories built before it opens run without it.
    store: std::sync::RwLock<Option<Arc<Store>>>,
    /// Why there is no cache, in one line, for `status`.
    cache_note: Mutex<Option<String>>,
    /// The embedding model, once loaded; see [`model`].
    model: OnceLock<Arc<Embedder>>,
    /// Why the model could not be loaded from its files, and their modification time then:
    /// loading is tried again only when the files change.
    model_failed: Mutex<Option<(Option<std::time::SystemTime>, String)>>,
    download: Mutex<model::Download>,
    /// This, for threads that outlive a call (the model download).
    me: std::sync::Weak<Residents>,
    embed_queue: Mutex<mpsc::Sender<Arc<Resident>>>,
    embedding: Arc<AtomicBool>,
    /// Answers, first builds and updates under way: background embedding gives way to them.
    foreground: Arc<AtomicUsize>,
    stopping: Arc<AtomicBool>,
    opts: ResidentOptions,
    /// The one file watcher, or why there is none.
    watch: Result<crate::watch::Watch, crate::watch::WatchError>,
    /// Roots with pending changes, for the updater thread.
    update_queue: Mutex<mpsc::Sender<PathBuf>>,
    /// Repositories the budget dropped, for `status` (see [`budget`]).
    left: Mutex<Vec<LeftMemory>>,
}

impl Residents {
    /// Starts the background embedder thread.
    pub fn new(store: Option<Arc<Store>>, opts: ResidentOptions) -> Arc<Residents> {
        let (tx, rx) = mpsc::channel::<Arc<Resident>>();
        let embedding = Arc::new(AtomicBool::new(false));
        let foreground = Arc::new(AtomicUsize::new(0));
        let stopping = Arc::new(AtomicBool::new(false));
        let (update_tx, update_rx) = mpsc::channel::<PathBuf>();
        let residents = Arc::new_cyclic(|weak: &std::sync::Weak<Residents>| {
            let watch = if opts.autowatch {
                let weak = weak.clone();
                crate::watch::Watch::new(Arc::new(move |root: &Path, batch| {
                    if let Some(r) = weak.upgrade() {
                        r.on_batch(root, batch);
                    }
                }))
            } else {
                Err(crate::watch::WatchError::Off)
            };
            if let Err(why) = &watch {
                tracing::info!(%why, "not watching files; changes are checked before each answer");
            }
            Residents {
                repos: Mutex::new(HashMap::new()),
                store: std::sync::RwLock::new(store),
                cache_note: Mutex::new(None),
                model: OnceLock::new(),
                model_failed: Mutex::new(None),
                download: Mutex::new(model::Download::NotStarted),
                me: weak.clone(),
                embed_queue: Mutex::new(tx),
                embedding: embedding.clone(),
                foreground: foreground.clone(),
                stopping: stopping.clone(),
                opts,
                watch,
                update_queue: Mutex::new(update_tx),
                left: Mutex::new(Vec::new()),
            }
        });
        let weak = Arc::downgrade(&residents);
        let spawned = std::thread::Builder::new()
            .name("fittok-update".into())
            .spawn(move || live::update_loop(update_rx, weak));
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the updater");
        }
        let spawned = std::thread::Builder::new()
            .name("fittok-embed".into())
            .spawn(move || embed_loop(rx, embedding, foreground, stopping));
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the background embedder");
        }
        residents
    }

    /// The configuration the daemon was started with.
    pub fn config(&self) -> &crate::config::DaemonConfig {
        &self.opts.config
    }

    /// Tells background work to stop at its next slice; calls waiting for it give up.
    pub fn begin_stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Stops background embedding at its next slice and waits (up to 5 s) for it, so the
    /// store is closed cleanly at exit.
    pub fn stop(&self) {
        self.begin_stop();
        let t = Instant::now();
        while self.is_embedding() && t.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        // A snapshot being written is what the next daemon starts from: let it land (a large
        // repository's takes seconds; one cut short leaves only its temporary file).
        let t = Instant::now();
        while SNAPSHOTS_SAVING.load(Ordering::Acquire) > 0 && t.elapsed() < SNAPSHOT_WAIT {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.repos.lock().unwrap_or_else(|p| p.into_inner()).clear();
        if let Ok(mut slot) = self.store.write() {
            slot.take();
        }
    }

    fn resident(&self, root: &Path) -> Arc<Resident> {
        let mut repos = self.repos.lock().unwrap_or_else(|p| p.into_inner());
        repos
            .entry(root.to_path_buf())
            .or_insert_with(|| Arc::new(Resident::new(root.to_path_buf())))
            .clone()
    }

    /// The whole snapshot of `path`, building it first if it is not resident. `progress` hears
    /// the build's stages when this call does the building.
    pub fn ensure(
        &self,
        path: &Path,
        progress: Option<Progress<'_>>,
    ) -> Result<(Arc<Resident>, Arc<Engine>), EngineError> {
        self.ensure_for(path, progress, Need::Everything)
    }

    /// The snapshot of `path` for what the caller needs: with [`Need::SourcesFirst`] a cold
    /// build of a repository with many tests publishes without them, and the updater adds
    /// them right after; with [`Need::Everything`] such a snapshot is completed first.
    pub fn ensure_for(
        &self,
        path: &Path,
        progress: Option<Progress<'_>>,
        need: Need,
    ) -> Result<(Arc<Resident>, Arc<Engine>), EngineError> {
        let root = canonical_root(path)?;
        let resident = self.resident(&root);
        resident.last_used_ms.store(now_ms(), Ordering::Relaxed);
        let engine = match resident.snapshot() {
            Some(engine) => self.checked(&resident, engine),
            None => self.first_build(&resident, progress, need)?,
        };
        let engine = match need {
            Need::Everything => self.completed(&resident, engine),
            Need::SourcesFirst => engine,
        };
        // A model that reached the disk since this snapshot was built joins it now.
        let engine = self.model_arrived(&resident, &engine).unwrap_or(engine);
        history::refresh(&resident, &engine);
        Ok((resident, engine))
    }

    /// Builds and publishes `resident`'s first snapshot, or returns the one a concurrent
    /// caller built meanwhile.
    fn first_build(
        &self,
        resident: &Arc<Resident>,
        progress: Option<Progress<'_>>,
        need: Need,
    ) -> Result<Arc<Engine>, EngineError> {
        let root = &resident.root;
        let _building = resident.building.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(engine) = resident.snapshot() {
            return Ok(engine);
        }
        resident.indexing.store(true, Ordering::Relaxed);
        let built = self.build(root, progress, need);
        resident.indexing.store(false, Ordering::Relaxed);
        let engine = match built {
            Ok(engine) => Arc::new(engine),
            Err(e) => {
                self.forget(root);
                return Err(e);
            }
        };
        resident.publish(engine.clone());
        self.queue_embedding(resident, &engine);
        // A snapshot without its tests lists them as changed: the watcher's first batch, so the
        // updater adds them at once.
        self.start_watching(resident, &engine);
        self.enforce_budget(root);
        save_snapshot_in_background(&engine);
        // A build's transient buffers (parse trees, token maps, a snapshot's metadata) were
        // freed on this thread: give their pages back.
        release_free_memory();
        Ok(engine)
    }

    /// `engine`, or — when it is a first build whose tests are still to come — the snapshot
    /// that has them, made now if the updater has not made it yet.
    fn completed(&self, resident: &Arc<Resident>, engine: Arc<Engine>) -> Arc<Engine> {
        if engine.deferred_tests() == 0 {
            return engine;
        }
        // What is pending (the tests among it) is taken here rather than by the updater.
        self.refresh(&resident.root);
        let _building = resident.building.lock().unwrap_or_else(|p| p.into_inner());
        let current = resident.snapshot().unwrap_or(engine);
        if current.deferred_tests() == 0 {
            return current;
        }
        // Not posted yet (no watcher, or it had not started): add them directly.
        match current.stale_paths() {
            Ok(stale) => self
                .apply(resident, &current, stale.into_iter().collect())
                .unwrap_or(current),
            Err(e) => {
                tracing::warn!(repo = %resident.root.display(), error = %e, "cannot add the deferred tests");
                current
            }
        }
    }

    fn build(
        &self,
        root: &Path,
        progress: Option<Progress<'_>>,
        need: Need,
    ) -> Result<Engine, EngineError> {
        let t = Instant::now();
        let config = self.opts.config.engine.clone();
        let defer_over = self.opts.config.defer_tests_over;
        let mut engine = match need {
            Need::SourcesFirst if defer_over > 0 => {
                Engine::open_sources_first(root, config, self.store(), progress, defer_over)?
            }
            _ => Engine::open_in(root, config, self.store(), progress)?,
        };
        // A first snapshot without its tests is replaced at once by the update that adds them.
        // With no vectors stored for the repository the model has nothing to rank with, so
        // loading it and looking its vectors up (kafka: ~250 ms) waits for that update.
        let model_on_hand =
            self.opts.semantic && (self.model.get().is_some() || self.model_dir().is_ok());
        if engine.deferred_tests() > 0 && model_on_hand && !engine.has_stored_vectors() {
            engine
                .semantic
                .defer("the embedding model joins once the tests are indexed");
        } else if let Err(why) = self.attach_model(&mut engine) {
            engine.semantic.unavailable(&why);
        }
        let g = &engine.repo.graph;
        tracing::info!(
            repo = %root.display(),
            files = g.files.len(),
            reused = engine.timings.reused,
            nodes = g.nodes.len(),
            ms = t.elapsed().as_millis() as u64,
            walk_ms = engine.timings.walk.as_millis() as u64,
            parse_ms = engine.timings.parse.as_millis() as u64,
            link_ms = engine.timings.link.as_millis() as u64,
            lexical_ms = engine.timings.lexical.as_millis() as u64,
            deferred_tests = engine.deferred_tests(),
            missing_vectors = engine.semantic.missing(),
            "repository resident"
        );
        Ok(engine)
    }

    /// Drops a repository from memory. Returns whether it was resident.
    pub fn forget(&self, path: &Path) -> bool {
        let root = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if let Ok(w) = &self.watch {
            w.remove(&root);
        }
        let mut repos = self.repos.lock().unwrap_or_else(|p| p.into_inner());
        match repos.remove(&root) {
            Some(resident) => {
                resident.release();
                true
            }
            None => false,
        }
    }

    /// Every resident repository, most recently used first.
    pub fn list(&self) -> Vec<Arc<Resident>> {
        let repos = self.repos.lock().unwrap_or_else(|p| p.into_inner());
        let mut all: Vec<Arc<Resident>> = repos.values().cloned().collect();
        all.sort_by_key(|r| std::cmp::Reverse(r.last_used_ms.load(Ordering::Relaxed)));
        all
    }
}

/// The canonical root of a repository path, or the walk's error for a missing one.
fn canonical_root(path: &Path) -> Result<PathBuf, EngineError> {
    let root = path
        .canonicalize()
        .map_err(|_| fittok_engine::walk::WalkError::Missing(path.to_path_buf()))?;
    if !root.is_dir() {
        return Err(fittok_engine::walk::WalkError::NotADirectory(root).into());
    }
    Ok(root)
}
