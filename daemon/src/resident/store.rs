//! The cache (parses and vectors) as the daemon holds it: opened at start, retried in the
//! background while another process holds it, and said so meanwhile.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fittok_engine::store::Store;

use super::Residents;

impl Residents {
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
    pub(super) fn try_open_store(&self, path: &Path) -> bool {
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
}
