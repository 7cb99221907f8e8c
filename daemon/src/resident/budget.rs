//! The memory budget: the process's resident set, measured, kept within the budget by
//! evicting the least recently used repositories (their snapshots stay on disk).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use super::{Residents, now_ms};

/// How many repositories that left memory `status` remembers (the most recent).
const LEFT_MEMORY_KEPT: usize = 64;

/// A repository the budget dropped from memory: its snapshot stays in the cache on disk, so
/// the next question about it is a warm load. What `status` says of it.
#[derive(Debug, Clone)]
pub struct LeftMemory {
    pub root: PathBuf,
    /// Unix milliseconds.
    pub at_ms: u64,
    pub indexed_at_ms: u64,
    pub last_used_ms: u64,
    pub files: usize,
    pub nodes: usize,
    pub edges: usize,
}

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
                let g = &e.repo.graph;
                self.left_memory(LeftMemory {
                    root: r.root.clone(),
                    at_ms: now_ms(),
                    indexed_at_ms: r.indexed_at_ms.load(Ordering::Relaxed),
                    last_used_ms: r.last_used_ms.load(Ordering::Relaxed),
                    files: g.files.len(),
                    nodes: g.nodes.len(),
                    edges: g.edges.len(),
                });
                drop(e);
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

impl Residents {
    fn left_memory(&self, left: LeftMemory) {
        let mut all = self.left.lock().unwrap_or_else(|p| p.into_inner());
        all.retain(|l| l.root != left.root);
        all.push(left);
        if all.len() > LEFT_MEMORY_KEPT {
            all.remove(0);
        }
    }

    /// Repositories the budget dropped from memory and no question has brought back, most
    /// recently dropped first.
    pub fn on_disk_only(&self) -> Vec<LeftMemory> {
        let resident: Vec<PathBuf> = self.list().into_iter().map(|r| r.root.clone()).collect();
        let all = self.left.lock().unwrap_or_else(|p| p.into_inner());
        all.iter()
            .rev()
            .filter(|l| !resident.contains(&l.root))
            .cloned()
            .collect()
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
