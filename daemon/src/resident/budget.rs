//! The memory budget: the process's resident set, measured, kept within the budget by
//! evicting the least recently used repositories (their snapshots stay on disk).

use std::path::Path;

use super::Residents;

impl Residents {
    pub fn memory_budget(&self) -> usize {
        self.opts.memory_budget
    }

    /// Keeps the process within the memory budget: least recently used repositories leave
    /// memory (their snapshots stay on disk, so a return is a warm load) until what the
    /// resident structures hold plus everything else the process holds — the model, caches,
    /// the allocator's slack, measured as resident set minus the structures' estimate — fits.
    /// `keep` (the repository being answered) stays.
    pub(super) fn enforce_budget(&self, keep: &Path) {
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

/// The process's resident set in bytes (0 where the platform does not say).
pub fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// Returns the memory the allocator keeps after dropping repositories to the system, so the
/// next measurement of the resident set sees what the process actually holds.
pub(super) fn release_free_memory() {
    // SAFETY: mi_collect only walks mimalloc's own heaps; harmless if mimalloc is not the
    // global allocator.
    unsafe { libmimalloc_sys::mi_collect(true) };
}
