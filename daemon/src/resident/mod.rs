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

mod history;
mod live;
mod model;

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
        if let Ok(mut s) = self.snapshot.write() {
            *s = Some(engine);
        }
        self.indexed_at_ms.store(now_ms(), Ordering::Relaxed);
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
    stopping: Arc<AtomicBool>,
    opts: ResidentOptions,
    /// The one file watcher, or why there is none.
    watch: Result<crate::watch::Watch, crate::watch::WatchError>,
    /// Roots with pending changes, for the updater thread.
    update_queue: Mutex<mpsc::Sender<PathBuf>>,
}

impl Residents {
    /// Starts the background embedder thread.
    pub fn new(store: Option<Arc<Store>>, opts: ResidentOptions) -> Arc<Residents> {
        let (tx, rx) = mpsc::channel::<Arc<Resident>>();
        let embedding = Arc::new(AtomicBool::new(false));
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
                stopping: stopping.clone(),
                opts,
                watch,
                update_queue: Mutex::new(update_tx),
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
            .spawn(move || embed_loop(rx, embedding, stopping));
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the background embedder");
        }
        residents
    }

    /// The configuration the daemon was started with.
    pub fn config(&self) -> &crate::config::DaemonConfig {
        &self.opts.config
    }

    /// The cache, when open.
    pub fn store(&self) -> Option<Arc<Store>> {
        self.store.read().map(|s| s.clone()).unwrap_or(None)
    }

    /// Why the daemon runs without its cache, if it does.
    pub fn cache_note(&self) -> Option<String> {
        self.cache_note.lock().map(|n| n.clone()).unwrap_or(None)
    }

    /// Opens the cache at `path` now; if another process holds it (a predecessor still
    /// closing, or a second daemon), keeps trying in the background — often at first, then
    /// every 30 s — and says so in [`Residents::cache_note`] meanwhile. A cache that cannot be
    /// written is not retried: the daemon runs without it.
    pub fn open_store(self: &Arc<Self>, path: PathBuf) {
        if self.try_open_store(&path) {
            return;
        }
        let weak = Arc::downgrade(self);
        let started = Instant::now();
        let spawned = std::thread::Builder::new()
            .name("fittok-cache-lock".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(if started.elapsed() < Duration::from_secs(10) {
                        Duration::from_millis(250)
                    } else {
                        Duration::from_secs(30)
                    });
                    let Some(r) = weak.upgrade() else { return };
                    if r.is_stopping() || r.try_open_store(&path) {
                        return;
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start the cache retry thread");
        }
    }

    /// One attempt; `true` when there is nothing left to retry.
    fn try_open_store(&self, path: &Path) -> bool {
        match Store::open(path) {
            Ok(s) => {
                if let Ok(mut slot) = self.store.write() {
                    *slot = Some(Arc::new(s));
                }
                if let Ok(mut note) = self.cache_note.lock()
                    && note.take().is_some()
                {
                    tracing::info!(store = %path.display(), "cache opened");
                }
                true
            }
            Err(e) => {
                let locked = e.is_locked();
                let note = if locked {
                    format!(
                        "cache {} is held by another process; answering without it and retrying",
                        path.display()
                    )
                } else {
                    format!("cache unavailable ({e}); answering without it")
                };
                if let Ok(mut slot) = self.cache_note.lock() {
                    if slot.as_deref() != Some(note.as_str()) {
                        tracing::warn!("{note}");
                    }
                    *slot = Some(note);
                }
                !locked
            }
        }
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

    /// Whether the background embedder is working right now.
    pub fn is_embedding(&self) -> bool {
        self.embedding.load(Ordering::Relaxed)
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

    /// Hands a snapshot with nodes lacking vectors to the background embedder.
    fn queue_embedding(&self, resident: &Arc<Resident>, engine: &Engine) {
        if engine.semantic_missing() > 0
            && let Ok(tx) = self.embed_queue.lock()
        {
            let _ = tx.send(resident.clone());
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
        match self.model() {
            Ok(model) => {
                engine.attach_semantic(model);
                engine.set_pending_hint("embedding in the background");
            }
            Err(why) => engine.semantic_unavailable(&why),
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
            missing_vectors = engine.semantic_missing(),
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
        repos.remove(&root).is_some()
    }

    /// Every resident repository, most recently used first.
    pub fn list(&self) -> Vec<Arc<Resident>> {
        let repos = self.repos.lock().unwrap_or_else(|p| p.into_inner());
        let mut all: Vec<Arc<Resident>> = repos.values().cloned().collect();
        all.sort_by_key(|r| std::cmp::Reverse(r.last_used_ms.load(Ordering::Relaxed)));
        all
    }

    pub fn memory_budget(&self) -> usize {
        self.opts.memory_budget
    }

    /// Drops least-recently-used repositories (never `keep`) while the estimate is over budget.
    /// Keeps the process within the memory budget: least recently used repositories leave
    /// memory (their snapshots stay on disk, so a return is a warm load) until what the
    /// resident structures hold plus everything else the process holds — the model, caches,
    /// the allocator's slack, measured as resident set minus the structures' estimate — fits.
    /// `keep` (the repository being answered) stays.
    fn enforce_budget(&self, keep: &Path) {
        let all = self.list();
        let mut resident: usize = all
            .iter()
            .filter_map(|r| r.snapshot())
            .map(|e| e.memory_bytes())
            .sum();
        let rss = rss_bytes() as usize;
        // Where the platform does not say, the estimate alone is what there is.
        let rest = rss.saturating_sub(resident);
        let budget = self.opts.memory_budget;
        let mut dropped = 0;
        for r in all.iter().rev() {
            if resident + rest <= budget {
                break;
            }
            if r.root == keep {
                continue;
            }
            if let Some(e) = r.snapshot() {
                resident = resident.saturating_sub(e.memory_bytes());
                tracing::info!(repo = %r.root.display(), rss_mb = rss >> 20, budget_mb = budget >> 20, "memory budget exceeded; repository dropped from memory");
                self.forget(&r.root);
                dropped += 1;
            }
        }
        if dropped > 0 {
            release_free_memory();
        }
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

/// Puts the calling thread at idle CPU priority, so background work (embedding, reading
/// history) runs only when nothing else wants the core: Linux `SCHED_IDLE`, and nice 19 where
/// that is refused.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain syscalls on the calling thread (pid 0 and the thread's own id name it);
    // failure only leaves the priority as it was.
    unsafe {
        let param = libc::sched_param { sched_priority: 0 };
        if libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) != 0 {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::setpriority(libc::PRIO_PROCESS, tid, 19);
        }
    }
    #[cfg(windows)]
    // SAFETY: the pseudo-handle of the calling thread; failure leaves the priority as it was.
    unsafe {
        use windows_sys::Win32::System::Threading::{
            GetCurrentThread, SetThreadPriority, THREAD_PRIORITY_BELOW_NORMAL,
        };
        SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL);
    }
}

/// The background embedder: one repository at a time, in slices of a few seconds so a newer
/// snapshot or a forgotten repository is noticed quickly.
fn embed_loop(rx: mpsc::Receiver<Arc<Resident>>, busy: Arc<AtomicBool>, stop: Arc<AtomicBool>) {
    lower_priority();
    while let Ok(resident) = rx.recv() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        busy.store(true, Ordering::Relaxed);
        let t = Instant::now();
        let mut embedded = 0;
        loop {
            // Held only for a slice: a snapshot replaced meanwhile gets its own turn.
            let Some(engine) = resident.snapshot() else {
                break;
            };
            if engine.semantic_missing() == 0 || stop.load(Ordering::SeqCst) {
                break;
            }
            resident.embedding_slice.store(true, Ordering::SeqCst);
            let filled = engine.fill_semantic(Some(Instant::now() + Duration::from_secs(2)));
            if let Ok(n) = filled {
                embedded += n;
                resident.embedded.fetch_add(n as u64, Ordering::SeqCst);
            }
            resident.embedding_slice.store(false, Ordering::SeqCst);
            match filled {
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(repo = %resident.root.display(), error = %e, "embedding failed");
                    break;
                }
            }
            // Dropped from the resident set: stop working for it.
            if Arc::strong_count(&resident) <= 1 {
                break;
            }
        }
        tracing::info!(
            repo = %resident.root.display(),
            embedded,
            secs = t.elapsed().as_secs_f32(),
            "background embedding finished"
        );
        release_free_memory();
        busy.store(false, Ordering::Relaxed);
    }
}

/// Returns memory the allocator keeps after a burst of embedding (activations of hundreds of
/// batches) to the system, so a settled daemon's RSS is what it actually holds.
/// The process's resident set in bytes (0 where the platform does not say).
pub fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

fn release_free_memory() {
    // SAFETY: mi_collect only walks mimalloc's own heaps; harmless if mimalloc is not the
    // global allocator.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

/// Snapshot writes under way (see [`Residents::stop`]).
static SNAPSHOTS_SAVING: AtomicUsize = AtomicUsize::new(0);
/// How long a stopping daemon waits for them.
const SNAPSHOT_WAIT: Duration = Duration::from_secs(30);

/// Writes a newly built repository's snapshot (graph and indexes) to the cache on a thread of
/// its own, off the answer's path, so that the next daemon only checks stamps. One restored
/// from an identical snapshot writes nothing.
/// Merges `engine`'s lexical indexes on a thread of their own when enough of them changed:
/// updates add segments so that a save re-tokenizes only what it changed, and the merge that
/// folds them back costs a pass over every posting — never on the save's path. At most one
/// merge per repository at a time; a newer snapshot carries the segments on and merges later.
fn merge_in_background(resident: &Arc<Resident>, engine: &Arc<Engine>) {
    if !engine.lexical_merge_due() || resident.merging.swap(true, Ordering::AcqRel) {
        return;
    }
    let (resident, engine) = (resident.clone(), engine.clone());
    let resident_on_error = resident.clone();
    let spawned = std::thread::Builder::new()
        .name("fittok-merge".into())
        .spawn(move || {
            let t = Instant::now();
            if engine.merge_lexical() {
                tracing::info!(
                    repo = %resident.root.display(),
                    ms = t.elapsed().as_millis() as u64,
                    "lexical segments merged"
                );
            }
            resident.merging.store(false, Ordering::Release);
        });
    if let Err(e) = spawned {
        resident_on_error.merging.store(false, Ordering::Release);
        tracing::warn!(error = %e, "lexical segments not merged: no thread");
    }
}

fn save_snapshot_in_background(engine: &Arc<Engine>) {
    if engine.is_restored() {
        return;
    }
    let engine = engine.clone();
    SNAPSHOTS_SAVING.fetch_add(1, Ordering::AcqRel);
    let spawned = std::thread::Builder::new()
        .name("fittok-snapshot".into())
        .spawn(move || {
            struct Saving;
            impl Drop for Saving {
                fn drop(&mut self) {
                    SNAPSHOTS_SAVING.fetch_sub(1, Ordering::AcqRel);
                }
            }
            let _saving = Saving;
            let t = Instant::now();
            match engine.save_snapshot() {
                Ok(()) => tracing::debug!(
                    repo = %engine.repo.root.display(),
                    ms = t.elapsed().as_millis() as u64,
                    "snapshot saved"
                ),
                Err(e) => tracing::warn!(error = %e, "snapshot not saved"),
            }
        });
    if let Err(e) = spawned {
        SNAPSHOTS_SAVING.fetch_sub(1, Ordering::AcqRel);
        tracing::warn!(error = %e, "snapshot not saved: no thread");
    }
}
