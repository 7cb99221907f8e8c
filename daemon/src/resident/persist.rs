//! Writing a resident repository back to disk off the answer's path: merging lexical
//! segments and saving the snapshot, which a stopping daemon waits for.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fittok_engine::engine::Engine;

use super::Resident;

/// Snapshot writes under way (see [`Residents::stop`]).
pub(super) static SNAPSHOTS_SAVING: AtomicUsize = AtomicUsize::new(0);

/// How long a stopping daemon waits for them.
pub(super) const SNAPSHOT_WAIT: Duration = Duration::from_secs(30);

/// Merges `engine`'s lexical indexes on a thread of their own when enough of them changed:
/// updates add segments so that a save re-tokenizes only what it changed, and the merge that
/// folds them back costs a pass over every posting — never on the save's path. At most one
/// merge per repository at a time; a newer snapshot carries the segments on and merges later.
pub(super) fn merge_in_background(resident: &Arc<Resident>, engine: &Arc<Engine>) {
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

/// Writes a newly built repository's snapshot (graph and indexes) to the cache on a thread of
/// its own, off the answer's path, so that the next daemon only checks stamps. One restored
/// from an identical snapshot writes nothing.
pub(super) fn save_snapshot_in_background(engine: &Arc<Engine>) {
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
