//! Keeping resident snapshots current: watcher batches accumulate as pending changes; one
//! updater thread turns them into a new snapshot (`Engine::update`) and swaps it in, while
//! queries keep answering from the last one and say what is pending. Without a watcher, a
//! query first lists the repository and updates what changed.
//!
//! Coalescing: every batch only adds to the pending set and pokes the updater; the updater
//! drains all pokes and takes the whole set at once, so a checkout of thousands of files is
//! one or two updates, never thousands.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak, mpsc};
use std::time::Instant;

use super::{Resident, Residents, now_ms};
use crate::watch::Batch;
use fittok_engine::engine::{Engine, EngineError};
use fittok_engine::walk::WalkError;

#[derive(Debug, Default)]
pub(super) struct Live {
    watching: bool,
    /// Why the repository is not watched.
    not_watching: Option<String>,
    pending: HashSet<String>,
    rescan: bool,
    updating: bool,
    /// The repository directory is gone.
    deleted: bool,
    updated_at_ms: u64,
}

/// What status reports about a repository's freshness.
#[derive(Debug, Clone, Default)]
pub struct LiveStatus {
    pub watching: bool,
    /// Why not watching, or that the directory is gone.
    pub note: String,
    pub pending_files: usize,
    pub updated_at_ms: u64,
    pub deleted: bool,
}

impl Resident {
    fn live(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One line for answers: current, what is pending, or why changes are checked on demand.
    pub fn freshness(&self) -> String {
        let live = self.live();
        if live.deleted {
            return "repository directory deleted".into();
        }
        if let Some(n) = self
            .snapshot()
            .map(|e| e.deferred_tests())
            .filter(|&n| n > 0)
        {
            return format!("{n} test files still being indexed; answer from the other sources");
        }
        if !live.watching {
            let why = live.not_watching.as_deref().unwrap_or("not started");
            return format!("current (not watched: {why}; changes checked before answering)");
        }
        let pending = live.pending.len();
        match (pending, live.rescan || live.updating) {
            (0, false) => "current".into(),
            (0, true) => "current, updating".into(),
            (n, _) => format!("{n} changed files pending; answer from the previous snapshot"),
        }
    }

    pub fn live_status(&self) -> LiveStatus {
        let live = self.live();
        LiveStatus {
            watching: live.watching,
            note: if live.deleted {
                "repository directory deleted".into()
            } else {
                live.not_watching.clone().unwrap_or_default()
            },
            pending_files: live.pending.len(),
            updated_at_ms: live.updated_at_ms,
            deleted: live.deleted,
        }
    }
}

impl Residents {
    /// Starts watching a freshly built repository, or records why not; then settles anything
    /// that changed between the build's listing and the watch.
    pub(super) fn start_watching(&self, resident: &Arc<Resident>, engine: &Engine) {
        let outcome = match &self.watch {
            Ok(w) => w.add(&resident.root),
            Err(why) => Err(why.clone()),
        };
        {
            let mut live = resident.live();
            live.updated_at_ms = now_ms();
            match &outcome {
                Ok(()) => live.watching = true,
                Err(why) => {
                    tracing::info!(repo = %resident.root.display(), %why, "not watching");
                    live.not_watching = Some(why.to_string());
                }
            }
        }
        // Unwatched, changes wait for the next query's check; the tests a first build left out
        // are added now all the same.
        if (outcome.is_ok() || engine.deferred_tests() > 0)
            && let Ok(stale) = engine.stale_paths()
            && !stale.is_empty()
        {
            self.on_batch(
                &resident.root,
                Batch {
                    paths: stale,
                    rescan: false,
                },
            );
        }
    }

    /// A watcher batch for `root`: recorded as pending; the updater is poked.
    pub(super) fn on_batch(&self, root: &Path, batch: Batch) {
        let resident = {
            let repos = self.repos.lock().unwrap_or_else(|p| p.into_inner());
            repos.get(root).cloned()
        };
        let Some(resident) = resident else {
            return;
        };
        {
            let mut live = resident.live();
            live.pending.extend(batch.paths);
            live.rescan |= batch.rescan;
        }
        if let Ok(tx) = self.update_queue.lock() {
            let _ = tx.send(root.to_path_buf());
        }
    }

    /// Without a watcher: lists the repository and, if anything changed, updates now (the
    /// query waits for it: it must not answer from stale code it could have seen).
    pub(super) fn checked(&self, resident: &Arc<Resident>, engine: Arc<Engine>) -> Arc<Engine> {
        if resident.live().watching {
            return engine;
        }
        let stale = match engine.stale_paths() {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(repo = %resident.root.display(), error = %e, "cannot check for changes");
                return engine;
            }
        };
        if stale.is_empty() {
            return engine;
        }
        let _building = resident.building.lock().unwrap_or_else(|p| p.into_inner());
        // Another query may have updated it meanwhile.
        let current = resident.snapshot().unwrap_or(engine);
        match self.apply(resident, &current, stale.into_iter().collect()) {
            Ok(updated) => updated,
            Err(_) => current,
        }
    }

    /// Builds the next snapshot from `current` and publishes it.
    pub(super) fn apply(
        &self,
        resident: &Arc<Resident>,
        current: &Engine,
        changed: HashSet<String>,
    ) -> Result<Arc<Engine>, EngineError> {
        let t = Instant::now();
        let n = changed.len();
        // A repository dropped from memory meanwhile (`Residents::forget`) stops its update.
        let mut next = current.update_unless_cancelled(changed, None, Some(&resident.released))?;
        // A model that arrived after this repository was built (downloaded on first use).
        if !next.semantic.has_model() {
            // Without one, the snapshot keeps the note its predecessor had.
            let _ = self.attach_model(&mut next);
        }
        let next = Arc::new(next);
        resident.publish(next.clone());
        // The first complete snapshot of a repository built without its tests is the one a
        // restart should find.
        if current.deferred_tests() > 0 && next.deferred_tests() == 0 {
            super::save_snapshot_in_background(&next);
        }
        resident.updates.fetch_add(1, Ordering::Relaxed);
        resident.live().updated_at_ms = now_ms();
        tracing::info!(
            repo = %resident.root.display(),
            changed = n,
            reread = next.repo.timings.rebuilt,
            files = next.repo.graph.files.len(),
            nodes = next.repo.graph.nodes.len(),
            to_embed = next.semantic.missing(),
            walk_ms = next.timings.walk.as_millis() as u64,
            parse_ms = next.timings.parse.as_millis() as u64,
            link_ms = next.timings.link.as_millis() as u64,
            lexical_ms = next.timings.lexical.as_millis() as u64,
            vectors_ms = next.timings.semantic_load.as_millis() as u64,
            ms = t.elapsed().as_millis() as u64,
            "snapshot updated"
        );
        // After the snapshot answers: the write scans the cache for files gone.
        next.store_parses();
        self.queue_embedding(resident, &next);
        super::merge_in_background(resident, &next);
        Ok(next)
    }

    /// Takes everything pending for `root` and publishes one new snapshot for it.
    pub(super) fn refresh(&self, root: &Path) {
        let resident = {
            let repos = self.repos.lock().unwrap_or_else(|p| p.into_inner());
            repos.get(root).cloned()
        };
        let Some(resident) = resident else {
            return;
        };
        let _building = resident.building.lock().unwrap_or_else(|p| p.into_inner());
        let Some(current) = resident.snapshot() else {
            return;
        };
        let changed = {
            let mut live = resident.live();
            if live.pending.is_empty() && !live.rescan {
                return;
            }
            live.rescan = false;
            live.updating = true;
            std::mem::take(&mut live.pending)
        };
        let completing = current.deferred_tests() > 0;
        let _foreground = self.foreground();
        let result = if root.is_dir() {
            self.apply(&resident, &current, changed)
        } else {
            Err(WalkError::Missing(root.to_path_buf()).into())
        };
        drop(current);
        if completing {
            // The update that added a first build's tests parsed and linked about as much as
            // a build: give the pages its buffers and the replaced snapshot held back.
            super::release_free_memory();
        }
        let mut live = resident.live();
        live.updating = false;
        if let Err(e) = result {
            if matches!(e, EngineError::Walk(_)) && !root.is_dir() {
                tracing::warn!(repo = %root.display(), "repository directory deleted; no longer watched");
                live.deleted = true;
                live.watching = false;
                live.pending.clear();
                if let Ok(w) = &self.watch {
                    w.remove(root);
                }
            } else if matches!(e, EngineError::Walk(WalkError::Cancelled)) {
                tracing::info!(repo = %root.display(), "update given up: the repository left memory");
            } else {
                tracing::warn!(repo = %root.display(), error = %e, "update failed; keeping the previous snapshot");
            }
        }
    }
}

/// The updater thread: one update at a time, each covering every change pending so far.
pub(super) fn update_loop(rx: mpsc::Receiver<PathBuf>, residents: Weak<Residents>) {
    while let Ok(first) = rx.recv() {
        let mut roots = vec![first];
        // Every poke already queued is covered by this round.
        while let Ok(more) = rx.try_recv() {
            if !roots.contains(&more) {
                roots.push(more);
            }
        }
        let Some(residents) = residents.upgrade() else {
            return;
        };
        if residents.is_stopping() {
            return;
        }
        for root in roots {
            residents.refresh(&root);
        }
    }
}
