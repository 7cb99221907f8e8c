//! Each resident repository's commit history, read off the answer's path.
//!
//! A repository's history is read on a background thread at idle priority after its first
//! answer, and read again when `HEAD` moved (checked at most every [`RECHECK_MS`], when the
//! repository is asked something). Snapshots share it: an update's snapshot takes its
//! predecessor's, and [`Resident::publish`] hands it to one built before it arrived. Without
//! git, or outside a work tree, answers go on without history.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use fittok_engine::engine::Engine;

use super::{Resident, lower_priority, now_ms};

/// How often a repository in use checks whether its `HEAD` moved.
const RECHECK_MS: u64 = 30_000;

/// Reads `resident`'s history in the background when it has none yet or its `HEAD` may have
/// moved since; at most one read per repository at a time.
pub fn refresh(resident: &Arc<Resident>, engine: &Arc<Engine>) {
    let now = now_ms();
    let checked = resident.history_checked_ms.load(Ordering::Relaxed);
    if checked != 0 && now.saturating_sub(checked) < RECHECK_MS {
        return;
    }
    if resident.history_loading.swap(true, Ordering::AcqRel) {
        return;
    }
    resident
        .history_checked_ms
        .store(now.max(1), Ordering::Relaxed);
    let (resident, engine) = (resident.clone(), engine.clone());
    let worker = resident.clone();
    let spawned = std::thread::Builder::new()
        .name("fittok-history".into())
        .spawn(move || {
            lower_priority();
            read(&worker, &engine);
            worker.history_loading.store(false, Ordering::Release);
        });
    if let Err(e) = spawned {
        resident.history_loading.store(false, Ordering::Release);
        tracing::warn!(error = %e, "history not read: no thread");
    }
}

fn read(resident: &Resident, engine: &Engine) {
    let current = resident.history();
    if let Some(h) = &current
        && fittok_engine::history::is_current(&resident.root, &h.head)
    {
        return;
    }
    let t = std::time::Instant::now();
    match engine.read_history() {
        Ok(Some(history)) => {
            tracing::info!(
                repo = %resident.root.display(),
                commits = history.commits(),
                ms = t.elapsed().as_millis() as u64,
                "history read"
            );
            let history = Arc::new(history);
            resident.keep_history(history.clone());
            if let Some(now) = resident.snapshot() {
                now.set_history(history);
            }
        }
        Ok(None) => {}
        Err(e) => {
            tracing::debug!(repo = %resident.root.display(), error = %e, "no history")
        }
    }
}
